"""`rebalance exporter --bootstrap HOST:PORT`: diff and conformance records as Prometheus metrics over HTTP."""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys
import threading

from streaming.cli.usage import EXIT_FAILURE, UsageError, client_options


def run(args: argparse.Namespace) -> int:
    if args.max_groups < 1:
        raise UsageError(f"--max-groups: expected a positive integer, got {args.max_groups}")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port: expected 0-65535, got {args.port}")
    if args.groups is not None:
        try:
            re.compile(args.groups)
        except re.error as exc:
            raise UsageError(f"--groups: not a regular expression: {exc}") from None
    options = client_options(args.kafka_option, args.bootstrap)
    from streaming.exporter.service import Exporter, ExporterConfig

    logging.basicConfig(level=logging.INFO, format="rebalance exporter: %(levelname)s %(message)s", stream=sys.stderr)
    logging.getLogger("kafka").setLevel(logging.CRITICAL)  # reconnect noise; the exporter logs the outage once
    topics = {"diff": args.diffs_topic, "conformance": args.conformance_topic}
    exporter = Exporter(ExporterConfig(args.bootstrap, topics, options, args.host, args.port, args.max_groups,
                                       args.groups))
    try:
        port = exporter.serve_http()
    except OSError as exc:
        print(f"rebalance exporter: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILURE
    print(f"rebalance exporter: metrics on http://{args.host}:{port}/metrics from {args.diffs_topic}, "
          f"{args.conformance_topic} at {args.bootstrap}", file=sys.stderr, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    exporter.run(stop)
    return 0

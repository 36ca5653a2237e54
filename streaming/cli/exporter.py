"""`rebalance exporter --bootstrap HOST:PORT [--web-config FILE]`: diff and conformance records as Prometheus
metrics over HTTP, or over HTTPS only with basic auth and client certificates as the web config says."""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys
import threading
from typing import TYPE_CHECKING

from streaming.cli.usage import EXIT_FAILURE, UsageError, client_options

if TYPE_CHECKING:
    from streaming.exporter.web_config import WebConfig


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
    web = web_config(args.web_config) if args.web_config is not None else None
    from streaming.exporter.service import Exporter, ExporterConfig

    logging.basicConfig(level=logging.INFO, format="rebalance exporter: %(levelname)s %(message)s", stream=sys.stderr)
    logging.getLogger("kafka").setLevel(logging.CRITICAL)  # reconnect noise; the exporter logs the outage once
    topics = {"diff": args.diffs_topic, "conformance": args.conformance_topic}
    exporter = Exporter(ExporterConfig(args.bootstrap, topics, options, args.host, args.port, args.max_groups,
                                       args.groups, web=web))
    try:
        port = exporter.serve_http()
    except OSError as exc:
        print(f"rebalance exporter: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILURE
    scheme = "http" if web is None else "https"
    print(f"rebalance exporter: metrics on {scheme}://{args.host}:{port}/metrics from {args.diffs_topic}, "
          f"{args.conformance_topic} at {args.bootstrap}{'' if web is None else _security(web)}",
          file=sys.stderr, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    exporter.run(stop)
    return 0


def web_config(path: str) -> WebConfig:
    """`--web-config FILE`, checked with its certificates loaded, before anything listens."""
    from streaming.exporter.web_config import WebConfigError, load_web_config

    try:
        return load_web_config(path)
    except WebConfigError as exc:
        raise UsageError(f"--web-config {path}: {exc}") from None


def _security(web: WebConfig) -> str:
    users = f"basic auth for {len(web.users)} user(s)" if web.users else "no basic auth"
    return f" (TLS; client certificates: {web.client_auth}; {users})"

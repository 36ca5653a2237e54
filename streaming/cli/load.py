"""`rebalance load LOG.jsonl --bootstrap HOST:PORT`: produce a captured log into the events topic."""

from __future__ import annotations

import argparse
import sys

from streaming.cli.usage import check_readable, client_options


def run(args: argparse.Namespace) -> int:
    path = check_readable(args.log)
    options = client_options(args.kafka_option, args.bootstrap, "producer")
    from streaming.kafka.loader import load_log

    load_log(path, args.bootstrap, args.topic, kafka_options=options, progress=sys.stderr)
    return 0

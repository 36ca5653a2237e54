"""`rebalance load LOG.jsonl --bootstrap HOST:PORT`: produce a captured log into the events topic."""

from __future__ import annotations

import argparse
import sys

from streaming.cli.usage import check_readable, client_options, kafka_failure


def run(args: argparse.Namespace) -> int:
    path = check_readable(args.log)
    options = client_options(args.kafka_option, args.bootstrap, "producer")
    from kafka.errors import KafkaError

    from streaming.kafka.loader import load_log

    try:
        load_log(path, args.bootstrap, args.topic, kafka_options=options, progress=sys.stderr)
    except (KafkaError, OSError) as exc:
        raise kafka_failure(args.bootstrap, exc) from None
    return 0

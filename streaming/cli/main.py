"""`rebalance` command line: argument parsing only; each command runs the `run(args)` of its own module here.

Heavy modules (Spark, Kafka) are imported inside the command that needs them, so `rebalance assign`
starts in milliseconds. Exit codes: 0 success, 2 bad usage or unreadable/invalid input, 1 runtime failure.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from streaming.cli.usage import EXIT_USAGE, UsageError

DEFAULT_STRATEGIES = "sticky,cooperative-sticky"


def _kafka_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kafka-option", action="append", default=[], metavar="KEY=VALUE",
        help="Kafka client setting passed through (security.protocol, sasl.*, ssl.*); repeatable",
    )


def _pipeline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strategies", default=DEFAULT_STRATEGIES,
                   help="comma-separated strategy names or 'all' (default: %(default)s)")
    p.add_argument("--max-events-per-batch", type=int, default=None, metavar="N",
                   help="admission control: at most N events per micro-batch")


DESCRIPTION = """Replay Kafka consumer-group membership through Kafka's own assignment strategies, computed
exactly as Kafka's Java client computes them, and emit one diff record per rebalance round."""
EXAMPLES = """examples:
  rebalance demo
  rebalance assign --strategy cooperative-sticky snapshot.json
  rebalance replay history.jsonl --out out/ --strategies all --report report.html
  rebalance load history.jsonl --bootstrap localhost:9092
  rebalance serve --bootstrap localhost:9092
  rebalance report out/ --out report.html
  rebalance exporter --bootstrap localhost:9092 --port 9464

Exit codes: 0 success, 2 bad usage or unreadable/invalid input, 1 runtime failure."""


def build_parser() -> argparse.ArgumentParser:
    from assignors.registry import STRATEGIES  # no strategy module is imported by this

    parser = argparse.ArgumentParser(
        prog="rebalance", description=DESCRIPTION, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("assign", help="one assignment of a snapshot JSON, printed as JSON")
    p.add_argument("--strategy", required=True, metavar="NAME", help=f"one of: {', '.join(STRATEGIES)}")
    p.add_argument("snapshot", metavar="SNAPSHOT.json",
                   help='{"topics": {t: n}, "members": {id: {"topics": [...], "owned": [[t, p], ...], ...}}}')
    p.set_defaults(run="streaming.cli.assign:run")

    p = sub.add_parser("demo", help="zero-config: local broker, bundled history, streaming job, summary")
    _pipeline_options(p)
    p.set_defaults(run="streaming.cli.demo:run")

    p = sub.add_parser("replay", help="the Spark pipeline over a captured JSONL log, no broker needed")
    p.add_argument("log", metavar="LOG.jsonl")
    p.add_argument("--out", default="out", metavar="DIR",
                   help="diffs under DIR/diffs/, dead letters under DIR/dead-letter/ (default: %(default)s)")
    p.add_argument("--checkpoint", default=None, metavar="DIR",
                   help="Spark checkpoint, to resume an interrupted replay (default: a temporary one)")
    p.add_argument("--report", default=None, metavar="REPORT.html", help="also write the what-if report")
    _pipeline_options(p)
    p.set_defaults(run="streaming.cli.replay:run")

    p = sub.add_parser("serve", help="the long-running service: events topic -> diffs topic")
    p.add_argument("--bootstrap", required=True, metavar="HOST:PORT")
    p.add_argument("--events-topic", default="rebalance.events", help="membership events in (default: %(default)s)")
    p.add_argument("--diffs-topic", default="rebalance.diffs", help="diff records out (default: %(default)s)")
    p.add_argument("--dead-letter-topic", default="rebalance.dead-letter",
                   help="invalid events with the reason (default: %(default)s)")
    p.add_argument("--checkpoint", default="checkpoints/serve", metavar="DIR",
                   help="Spark checkpoint: state and offsets (default: %(default)s)")
    p.add_argument("--once", action="store_true", help="process what is there, then exit")
    _pipeline_options(p)
    _kafka_options(p)
    p.set_defaults(run="streaming.cli.serve:run")

    p = sub.add_parser("load", help="produce a captured log into the events topic, keyed by group")
    p.add_argument("log", metavar="LOG.jsonl")
    p.add_argument("--bootstrap", required=True, metavar="HOST:PORT")
    p.add_argument("--topic", default="rebalance.events")
    _kafka_options(p)
    p.set_defaults(run="streaming.cli.load:run")

    p = sub.add_parser("exporter", help="diff and conformance records as Prometheus metrics over HTTP")
    p.add_argument("--bootstrap", required=True, metavar="HOST:PORT")
    p.add_argument("--diffs-topic", default="rebalance.diffs", help="diff records in (default: %(default)s)")
    p.add_argument("--conformance-topic", default="rebalance.conformance",
                   help="conformance records in, read once it exists (default: %(default)s)")
    p.add_argument("--port", type=int, default=9464, help="HTTP port of /metrics (default: %(default)s)")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default: %(default)s)")
    p.add_argument("--groups", default=None, metavar="REGEX",
                   help="export only groups whose id matches REGEX (full match)")
    p.add_argument("--max-groups", type=int, default=1000, metavar="N",
                   help="series for at most N groups, the first met; later groups' counters are summed under "
                        "group=\"__other__\" (default: %(default)s)")
    _kafka_options(p)
    p.set_defaults(run="streaming.cli.exporter:run")

    p = sub.add_parser("report", help="self-contained HTML what-if report from diff records")
    p.add_argument("diffs_dir", nargs="?", metavar="DIFFS_DIR")
    p.add_argument("--bootstrap", metavar="HOST:PORT")
    p.add_argument("--diffs-topic", default="rebalance.diffs")
    p.add_argument("--out", default="report.html", metavar="REPORT.html")
    _kafka_options(p)
    p.set_defaults(run="streaming.cli.report:run")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module, func = args.run.split(":")
    try:
        return int(getattr(importlib.import_module(module), func)(args) or 0)
    except UsageError as exc:
        print(f"rebalance {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())

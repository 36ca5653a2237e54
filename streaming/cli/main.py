"""`rebalance` command line: argument parsing only; each command runs the `run(args)` of its own module here.

Heavy modules (Spark, Kafka) are imported inside the command that needs them, so `rebalance assign`
starts in milliseconds. Exit codes: 0 success, 2 bad usage or unreadable/invalid input, 1 runtime failure,
130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from streaming.build import prefer_fresh_sources
from streaming.cli.capture import DEFAULT_CONNECT_TIMEOUT
from streaming.cli.usage import (
    DEFAULT_BATCH,
    EXIT_DEAD_LETTERS,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CommandFailure,
    UsageError,
)

DEFAULT_STRATEGIES = "sticky,cooperative-sticky"
INTERRUPTED = {  # what Ctrl-C leaves behind, per command
    "serve": "the next start with the same --checkpoint resumes after the last completed batch",
    "replay": "with --checkpoint, the next run resumes after the last completed batch",
    "load": "the lines produced so far stay in the topic (loading again duplicates them)",
}


def _kafka_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kafka-option", action="append", default=[], metavar="KEY=VALUE",
        help="Kafka client setting passed through (security.protocol, sasl.*, ssl.*); repeatable",
    )


def _pipeline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strategies", default=DEFAULT_STRATEGIES,
                   help="comma-separated strategy names or 'all' (default: %(default)s)")
    p.add_argument("--max-events-per-batch", type=int, default=None, metavar="N",
                   help=f"admission control: at most N events per micro-batch (replay and serve: {DEFAULT_BATCH:,})")
    p.add_argument("--timing", default="", metavar="rebalance_ms=N,heartbeat_ms=N",
                   help="the cost model's durations in ms (docs/cost.md): a classic rebalance (or 'observed': the "
                        "captured duration per group) and the consumer protocol's heartbeat interval "
                        "(default: rebalance_ms=3000,heartbeat_ms=5000)")


REPLAY_DESCRIPTION = f"""Replay a captured log: diffs under OUT/diffs/, dead letters under OUT/dead-letter/,
one file per micro-batch ({DEFAULT_BATCH:,} events per batch unless --max-events-per-batch says otherwise).
Both engines write byte-identical files (but for emitted_ts). Exit codes: 0 done, 2 bad usage or unreadable
input, {EXIT_DEAD_LETTERS} more dead letters than --max-dead-letter-ratio allows (the output is written)."""


CAPTURE_EXIT_CODES = f"""Exit codes: 0 done (--once) or stopped with Ctrl-C (every event read is written), 2 bad usage,
{EXIT_FAILURE} the broker did not answer within --connect-timeout (nothing is written, no file is made) or the
capture failed (an unreadable offsets topic, --strict on an undecodable record)."""


def _spark_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--master", default="local[2]", metavar="URL",
                   help="Spark master: local[N] or a standalone cluster spark://HOST:PORT (default: %(default)s)")
    p.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="Spark setting passed to the session (e.g. spark.executor.memory=4g); repeatable")


DESCRIPTION = """Replay Kafka consumer-group membership through Kafka's own assignment strategies, computed
exactly as Kafka's Java client computes them, and emit one diff record per rebalance round."""
EXAMPLES = """examples:
  rebalance demo
  rebalance assign --strategy cooperative-sticky snapshot.json
  rebalance replay history.jsonl --out out/ --strategies all --report report.html
  rebalance load history.jsonl --bootstrap localhost:9092
  rebalance serve --bootstrap localhost:9092
  rebalance report out/ --out report.html
  rebalance capture --bootstrap localhost:9092 --out history.jsonl
  rebalance conformance history.jsonl
  rebalance exporter --bootstrap localhost:9092 --port 9464

Exit codes: 0 success, 2 bad usage or unreadable/invalid input, 1 runtime failure, 130 Ctrl-C
(conformance: 1 when some generation did not get Kafka's assignment)."""


def build_parser() -> argparse.ArgumentParser:
    from assignors.registry import STRATEGIES  # no strategy module is imported by this
    from streaming.cli.replay import AUTO_LOCAL_MAX_LINES

    parser = argparse.ArgumentParser(
        prog="rebalance", description=DESCRIPTION, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("assign", help="one assignment of a snapshot JSON, printed as JSON",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="strategies:\n" + "\n".join(f"  {name}" for name in STRATEGIES))
    p.add_argument("--strategy", required=True, metavar="NAME", help="one of the strategies listed below")
    p.add_argument("snapshot", metavar="SNAPSHOT.json",
                   help='{"topics": {t: n}, "members": {id: {"topics": [...], "owned": [[t, p], ...], ...}}}')
    p.set_defaults(run="streaming.cli.assign:run")

    p = sub.add_parser("demo", help="zero-config: local broker, bundled histories, streaming job, report")
    p.add_argument("--report", default="rebalance-demo.html", metavar="REPORT.html",
                   help="where the what-if report goes (default: %(default)s)")
    _pipeline_options(p)
    p.set_defaults(run="streaming.cli.demo:run")

    p = sub.add_parser("replay", help="the pipeline over a captured JSONL log, no broker needed",
                       description=REPLAY_DESCRIPTION)
    p.add_argument("log", metavar="LOG.jsonl")
    p.add_argument("--engine", choices=("auto", "local", "spark"), default="auto",
                   help="local: the state machine in this process, no Spark start-up; spark: the streaming job; "
                        f"auto: local below {AUTO_LOCAL_MAX_LINES:,} lines and without --checkpoint "
                        "(default: %(default)s)")
    p.add_argument("--max-dead-letter-ratio", type=float, default=None, metavar="R",
                   help=f"exit with code {EXIT_DEAD_LETTERS} when more than R (0-1) of the events read were "
                        "dead-lettered")
    p.add_argument("--out", default="out", metavar="DIR",
                   help="diffs under DIR/diffs/, dead letters under DIR/dead-letter/ (default: %(default)s)")
    p.add_argument("--checkpoint", default=None, metavar="DIR",
                   help="Spark checkpoint, to resume an interrupted replay (default: a temporary one)")
    p.add_argument("--report", default=None, metavar="REPORT.html", help="also write the what-if report")
    _pipeline_options(p)
    _spark_options(p)
    p.set_defaults(run="streaming.cli.replay:run")

    p = sub.add_parser("serve", help="the long-running service: events topic -> diffs topic")
    p.add_argument("--bootstrap", required=True, metavar="HOST:PORT")
    p.add_argument("--events-topic", default="rebalance.events", help="membership events in (default: %(default)s)")
    p.add_argument("--diffs-topic", default="rebalance.diffs", help="diff records out (default: %(default)s)")
    p.add_argument("--dead-letter-topic", default="rebalance.dead-letter",
                   help="invalid events with the reason (default: %(default)s)")
    p.add_argument("--conformance-topic", default="rebalance.conformance",
                   help="per recorded generation: what Kafka's assignor computes vs what the group got "
                        "(default: %(default)s)")
    p.add_argument("--checkpoint", default="checkpoints/serve", metavar="DIR",
                   help="Spark checkpoint: state and offsets (default: %(default)s)")
    p.add_argument("--once", action="store_true", help="process what is there, then exit")
    _pipeline_options(p)
    _spark_options(p)
    _kafka_options(p)
    p.set_defaults(run="streaming.cli.serve:run")

    p = sub.add_parser("load", help="produce a captured log into the events topic, keyed by group")
    p.add_argument("log", metavar="LOG.jsonl")
    p.add_argument("--bootstrap", required=True, metavar="HOST:PORT")
    p.add_argument("--topic", default="rebalance.events")
    _kafka_options(p)
    p.set_defaults(run="streaming.cli.load:run")

    p = sub.add_parser("capture", help="record a live cluster's rebalances as events (offsets topic or polling)",
                       epilog=CAPTURE_EXIT_CODES)
    p.add_argument("--bootstrap", required=True, metavar="HOST:PORT")
    p.add_argument("--source", choices=("offsets", "describe"), default="offsets",
                   help="offsets: decode the group coordinator's records; describe: poll DescribeGroups "
                        "(default: %(default)s)")
    p.add_argument("--offsets-topic", default="__consumer_offsets", metavar="TOPIC",
                   help="where the coordinator's records are (default: %(default)s)")
    p.add_argument("--groups", default=None, metavar="REGEX", help="only groups whose id matches (re.search)")
    p.add_argument("--out", default="-", metavar="FILE.jsonl",
                   help="JSONL events; an existing file is continued where it stopped; '-' = stdout (default)")
    p.add_argument("--events-topic", default=None, metavar="TOPIC",
                   help="write the events to this topic instead, exactly once for read_committed readers "
                        "(--source offsets; continues where it stopped)")
    p.add_argument("--once", action="store_true", help="capture what is there now, then exit")
    p.add_argument("--poll-interval", type=float, default=5.0, metavar="SECONDS",
                   help="metadata (and describe) polling period (default: %(default)s)")
    p.add_argument("--strict", action="store_true", help="exit 1 at the first undecodable record")
    p.add_argument("--traffic-interval", type=float, default=None, metavar="SECONDS",
                   help="also measure the groups' topics' traffic: `rates` traffic events (msgs/s from end-offset "
                        "growth) per group and topic every SECONDS (--once: one interval at the end)")
    p.add_argument("--connect-timeout", type=float, default=DEFAULT_CONNECT_TIMEOUT, metavar="SECONDS",
                   help="how long to wait for the broker's first answer before giving up (default: %(default)s)")
    _kafka_options(p)
    p.set_defaults(run="streaming.cli.capture:run")

    p = sub.add_parser("exporter", help="diff and conformance records as Prometheus metrics over HTTP")
    p.add_argument("--bootstrap", required=True, metavar="HOST:PORT")
    p.add_argument("--diffs-topic", default="rebalance.diffs", help="diff records in (default: %(default)s)")
    p.add_argument("--conformance-topic", default="rebalance.conformance",
                   help="conformance records in, read once it exists (default: %(default)s)")
    p.add_argument("--port", type=int, default=9464, help="HTTP port of /metrics (default: %(default)s)")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default: %(default)s)")
    p.add_argument("--web-config", default=None, metavar="FILE",
                   help="serve /metrics over TLS only, with basic auth and client certificates as configured in "
                        "FILE (Prometheus exporter-toolkit's web config format, docs/exporter.md)")
    p.add_argument("--groups", default=None, metavar="REGEX",
                   help="export only groups whose id matches REGEX (full match)")
    p.add_argument("--max-groups", type=int, default=1000, metavar="N",
                   help="series for at most N groups, the first met; later groups' counters are summed under "
                        "group=\"__other__\" (default: %(default)s)")
    _kafka_options(p)
    p.set_defaults(run="streaming.cli.exporter:run")

    p = sub.add_parser("report", help="self-contained HTML what-if report from diff records")
    p.add_argument("diffs_dir", nargs="?", metavar="DIR",
                   help="a replay's --out directory OUT or its OUT/diffs (either way with OUT's dead letters and "
                        "conformance records), or a directory of diff records")
    p.add_argument("--bootstrap", metavar="HOST:PORT", help="read the records from this broker's topics instead of DIR")
    p.add_argument("--diffs-topic", default="rebalance.diffs", help="diff records (default: %(default)s)")
    p.add_argument("--dead-letter-topic", default="rebalance.dead-letter",
                   help="dead letters to summarize in the report, if the topic exists (default: %(default)s)")
    p.add_argument("--conformance-topic", default="rebalance.conformance",
                   help="conformance records for the report's conformance lane, if the topic exists "
                        "(default: %(default)s)")
    p.add_argument("--out", default="report.html", metavar="REPORT.html", help="(default: %(default)s)")
    _kafka_options(p)
    p.set_defaults(run="streaming.cli.report:run")

    p = sub.add_parser("conformance", help="per generation event of a log: was it Kafka's Java assignor's result?")
    p.add_argument("log", metavar="LOG.jsonl", help="generation events, with partitions events for topic sizes")
    p.add_argument("--json", action="store_true", help="print the conformance records as JSON lines")
    p.set_defaults(run="streaming.cli.conformance:run")
    return parser


def quiet_libraries() -> None:
    """Kafka's and py4j's retry chatter is not for the user: failures are reported by `main`, in one line.
    py4j also logs a lost JVM on the root logger (`logging.exception` in `GatewayClient.send_command`, which
    sets up a stderr handler on the way), so the root logger drops records made in py4j's files."""
    for library in ("kafka", "py4j"):
        logging.getLogger(library).addHandler(logging.NullHandler())
    logging.getLogger().addFilter(_not_from_py4j)


def _not_from_py4j(record: logging.LogRecord) -> bool:
    return f"{os.sep}py4j{os.sep}" not in record.pathname


def main(argv: Sequence[str] | None = None) -> int:
    prefer_fresh_sources()  # before the library loads: a source edited since the build runs, not its old build
    args = build_parser().parse_args(argv)
    quiet_libraries()
    module, func = args.run.split(":")
    try:
        return int(getattr(importlib.import_module(module), func)(args) or 0)
    except UsageError as exc:
        print(f"rebalance {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CommandFailure as exc:
        print(f"rebalance {args.command}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        hint = INTERRUPTED.get(args.command)
        print(f"rebalance {args.command}: interrupted{f'; {hint}' if hint else ''}", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    except Exception as exc:
        reason = _spark_failure(exc)
        if reason is None or os.environ.get("REBALANCE_TRACEBACK"):
            raise
        print(f"rebalance {args.command}: {reason} (REBALANCE_TRACEBACK=1 shows the full trace)", file=sys.stderr,
              flush=True)
        return EXIT_FAILURE


def _spark_failure(exc: BaseException) -> str | None:
    """One line for a failure of Spark or of its JVM (whose tracebacks run to a hundred lines), else None.

    The JVM is lost when py4j itself failed (a network error, or py4j's reconnect attempt raising
    ConnectionRefusedError over its own error). A `Py4JJavaError` is not that: the JVM answered with a Java
    exception, and PySpark raises its converted error over it (`raise ... from None` still keeps the
    original as `__context__`), so the query's own failure is what the line names."""
    from py4j.protocol import Py4JJavaError

    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and len(chain) < 32:
        chain.append(link)
        link = link.__cause__ or link.__context__
    if any((type(e).__module__ or "").startswith("py4j") and not isinstance(e, Py4JJavaError) for e in chain):
        return ("the Spark JVM stopped answering (killed, or out of memory?); a restart with the same "
                "--checkpoint resumes after the last completed batch")
    if isinstance(exc, Py4JJavaError):  # a Java exception PySpark did not convert: its own line
        try:
            text = str(exc)  # asks the JVM for the Java trace
        except Exception:  # the JVM went away since: the class name still says what failed
            text = ""
        java = [line.lstrip(": ").strip() for line in text.splitlines() if line.startswith(": ")]
        return f"Spark failed: {(java or [type(exc).__name__])[0][:300]}"
    if (type(exc).__module__ or "").startswith("pyspark"):
        text = str(exc).strip().splitlines()
        first = next((line.strip() for line in text if line.strip()), type(exc).__name__)
        return f"Spark failed: {first[:300]}"
    return None

if __name__ == "__main__":
    sys.exit(main())

"""`rebalance demo`: the whole service on a laptop, zero config.

Starts a throw-away local broker, loads the bundled sample histories into the events topic, runs the
streaming job until it has caught up (`serve --once`), reads the diffs and dead letters back as a dashboard
would (`read_committed`), writes the what-if report and prints, per group, one line per strategy (moved,
paused, gap to the fewest moves, worst imbalance: in msgs/s where the group has traffic), the report's path
and the commands to run on one's own groups (capture -> replay -> report).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from importlib.resources import files
from pathlib import Path

from streaming.cli.usage import check_batch_size, pipeline_config

NEXT_STEPS = """next, on your own groups:
  rebalance capture --bootstrap HOST:9092 --once --out history.jsonl   # membership history from a cluster
  rebalance replay history.jsonl --out out/ --strategies all --report report.html
  rebalance report out/ --out report.html                             # the report again, from out/"""


def sample_logs() -> list[Path]:
    """The bundled sample histories (whatif/samples/*.jsonl), in name order."""
    return sorted(Path(str(p)) for p in files("whatif").joinpath("samples").iterdir() if p.name.endswith(".jsonl"))


def run(args: argparse.Namespace) -> int:
    config = pipeline_config(args.strategies, args.timing)
    max_events = check_batch_size(args.max_events_per_batch)
    from streaming.demo.local_broker import LocalBroker
    from streaming.kafka.consumer import read_to_end
    from streaming.kafka.loader import load_log
    from streaming.kafka.topics import ServeTopics, ensure_serve_topics
    from streaming.spark.pipelines import serve_events
    from streaming.spark.session import build_spark

    logs = sample_logs()
    topics = ServeTopics()
    print("starting a local Kafka broker (noida-db)...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="rebalance-demo-") as tmp, LocalBroker() as broker:
        ensure_serve_topics(broker.bootstrap, topics)
        total = 0
        for log in logs:
            n = load_log(log, broker.bootstrap, topics.events, progress=None)
            total += n
            print(f"loaded {n:>5} events of {log.stem}", file=sys.stderr, flush=True)
        print(f"running the streaming job over {total} events (strategies: {', '.join(config.strategies)})...",
              file=sys.stderr, flush=True)
        spark = build_spark(app_name="rebalance-demo")
        serve_events(spark, broker.bootstrap, config, checkpoint=str(Path(tmp) / "checkpoint"), topics=topics,
                     once=True, max_events_per_batch=max_events)
        diffs = [json.loads(r.value) for r in read_to_end(broker.bootstrap, topics.diffs)]
        dead = [json.loads(r.value) for r in read_to_end(broker.bootstrap, topics.dead_letter)]
    from whatif.report import strategy_lines, write_report

    report = write_report(diffs, args.report, dead_letters=dead, events=total)
    print(f"\n{len(logs)} sample histories, {total} events, {len(report.groups)} groups: {len(diffs)} diff records, "
          f"{len(dead)} dead letters\n")
    print("per group, each strategy (least disruptive first): partitions moved, paused, moves beyond the fewest "
          "its loads allowed, worst imbalance (msgs/s of the busiest and the idlest member where the group has "
          "traffic, else max - min partitions per member)")
    print(strategy_lines([row for g in report.groups for row in g.rows]))
    print(f"\nreport: {Path(args.report).resolve()}  (one offline HTML file: open it in a browser)\n")
    print(NEXT_STEPS)
    return 0

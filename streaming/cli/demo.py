"""`rebalance demo`: the whole service on a laptop, zero config.

Starts a throw-away local broker, loads the bundled sample histories into the events topic, runs the
streaming job until it has caught up (`serve --once`), reads the diffs back as a dashboard would
(`read_committed`) and prints, per strategy, how much each would have disrupted the groups.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from streaming.cli.usage import check_batch_size, pipeline_config

SUMMARY_COLUMNS = ("rebalances", "rounds", "partitions moved", "paused")


def sample_logs() -> list[Path]:
    """The bundled sample histories (whatif/samples/*.jsonl), in name order."""
    return sorted(Path(str(p)) for p in files("whatif").joinpath("samples").iterdir() if p.name.endswith(".jsonl"))


def summarize(diffs: Iterable[dict[str, Any]], strategies: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per strategy, over all groups: rebalances, rounds, partitions moved, partitions paused (the what-if
    report's per-group summary, added up)."""
    from whatif.report import summarize as per_group

    out = {s: dict.fromkeys(SUMMARY_COLUMNS, 0) for s in strategies}
    for row in per_group(diffs):
        totals = out.setdefault(row.strategy, dict.fromkeys(SUMMARY_COLUMNS, 0))
        for column, value in zip(SUMMARY_COLUMNS, (row.rebalances, row.rounds, row.moves, row.paused), strict=True):
            totals[column] += value
    return out


def format_summary(summary: dict[str, dict[str, int]]) -> str:
    width = max(len("strategy"), *(len(s) for s in summary))
    lines = ["strategy".ljust(width) + "".join(f"  {c:>16}" for c in SUMMARY_COLUMNS)]
    for strategy, row in summary.items():
        lines.append(strategy.ljust(width) + "".join(f"  {row[c]:>16,}" for c in SUMMARY_COLUMNS))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    config = pipeline_config(args.strategies)
    max_events = check_batch_size(args.max_events_per_batch)
    from streaming.kafka.broker import LocalBroker
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
        dead = len(read_to_end(broker.bootstrap, topics.dead_letter))
    groups = len({d["group"] for d in diffs})
    print(f"\n{len(logs)} sample histories, {total} events, {groups} groups: {len(diffs)} diff records, "
          f"{dead} dead letters\n")
    print(format_summary(summarize(diffs, config.strategies)))
    return 0

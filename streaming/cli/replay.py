"""`rebalance replay LOG.jsonl`: the streaming pipeline over a captured log, no broker needed.

The same job as `serve`, with the JSONL file source and the files sink: diffs land under `--out/diffs/`,
dead letters under `--out/dead-letter/`, one JSON object per line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from streaming.cli.usage import UsageError, check_batch_size, check_readable, pipeline_config, spark_settings


def check_log(path: str) -> list[Path]:
    """The log's files, or a usage error naming what cannot be read."""
    from streaming.spark.jsonl_source import log_files

    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file or directory")
    files = log_files(p)
    if not files:
        raise UsageError(f"{path}: directory holds no *.jsonl files")
    for f in files:
        if not f.is_file():
            raise UsageError(f"{f}: not a regular file")
        check_readable(f)
    return files


def run(args: argparse.Namespace) -> int:
    check_log(args.log)
    config = pipeline_config(args.strategies)
    max_events = check_batch_size(args.max_events_per_batch)
    master, spark_conf = spark_settings(args.master, args.spark_conf)
    from streaming.core.records import DEAD_LETTER, DIFF
    from streaming.spark.pipelines import REPLAY_DIRS, read_output, replay_log
    from streaming.spark.session import build_spark

    spark = build_spark(app_name="rebalance-replay", master=master, extra_conf=spark_conf)
    events = replay_log(spark, args.log, args.out, config, max_events_per_batch=max_events,
                        checkpoint=args.checkpoint)
    diffs = read_output(args.out, DIFF)
    dead = read_output(args.out, DEAD_LETTER)
    out = Path(args.out)
    print(f"replayed {events} events: {len(diffs)} diff records in {out / REPLAY_DIRS[DIFF]}/, "
          f"{len(dead)} dead letters in {out / REPLAY_DIRS[DEAD_LETTER]}/")
    if args.report:
        from whatif.report import write_report

        write_report(diffs, args.report)
        print(f"report: {args.report}")
    return 0

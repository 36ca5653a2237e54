"""`rebalance replay LOG.jsonl`: the streaming pipeline over a captured log, no broker needed.

The same job as `serve`, with the JSONL file source and the files sink: diffs land under `--out/diffs/`,
dead letters under `--out/dead-letter/`, one JSON object per line. Without `--checkpoint` every run starts
from the first line (a temporary checkpoint, earlier batch files removed); with one it resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from streaming.cli import UsageError
from streaming.config import PipelineConfig
from streaming.job import await_query, build_pipeline, check_batch_size, pipeline_config, start_query
from streaming.jsonl_sink import read_records
from streaming.jsonl_source import log_files

TOPICS = {"diff": "diffs", "dead-letter": "dead-letter"}  # sink topics = subdirectories of --out


def check_log(path: str) -> list[Path]:
    """The log's files, or a usage error naming what cannot be read."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file or directory")
    files = log_files(p)
    if not files:
        raise UsageError(f"{path}: directory holds no *.jsonl files")
    for f in files:
        if not f.is_file():
            raise UsageError(f"{f}: not a regular file")
        try:
            with f.open("rb") as fh:
                fh.read(1)
        except OSError as exc:
            raise UsageError(f"{f}: cannot be read: {exc.strerror or exc}") from None
    return files


def _fresh(checkpoint: Path) -> bool:
    return not (checkpoint / "commits").is_dir() or not any((checkpoint / "commits").iterdir())


def replay_log(
    spark: SparkSession,
    log: str | os.PathLike[str],
    out: str | os.PathLike[str],
    config: PipelineConfig,
    *,
    max_events_per_batch: int | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    progress=sys.stderr,
) -> int:
    """Run the pipeline over `log` until every line is processed; returns the number of events read."""
    out = Path(out)
    own = checkpoint is None
    ckpt = Path(tempfile.mkdtemp(prefix="rebalance-replay-ckpt-")) if own else Path(checkpoint)
    try:
        if _fresh(ckpt):  # a new run: batch ids restart at 0, so earlier batch files would mix in
            for topic in TOPICS.values():
                for f in (out / topic).glob("batch-*.jsonl"):
                    f.unlink()
        reader = (spark.readStream.format("rebalance-jsonl").option("path", str(log))
                  .option("maxEventBytes", str(config.limits.max_event_bytes)))
        if max_events_per_batch:
            reader = reader.option("maxOffsetsPerTrigger", str(max_events_per_batch))
        output = build_pipeline(spark, reader.load(), config, TOPICS, source="files")
        query = start_query(output, "rebalance-files", {"path": str(out)}, str(ckpt), once=True)
        return await_query(query, "replay", out=progress)
    finally:
        if own:
            shutil.rmtree(ckpt, ignore_errors=True)


def read_output(out: str | os.PathLike[str], kind: str = "diff") -> list[dict[str, Any]]:
    """The records a replay wrote for `kind` ("diff" or "dead-letter"), in batch order."""
    return [json.loads(line) for line in read_records(Path(out) / TOPICS[kind])]


def run(args: argparse.Namespace) -> int:
    check_log(args.log)
    config = pipeline_config(args.strategies)
    max_events = check_batch_size(args.max_events_per_batch)
    from streaming.spark_session import build_spark

    spark = build_spark(app_name="rebalance-replay")
    events = replay_log(spark, args.log, args.out, config, max_events_per_batch=max_events,
                        checkpoint=args.checkpoint)
    diffs = read_output(args.out, "diff")
    dead = len(read_records(Path(args.out) / TOPICS["dead-letter"]))
    print(f"replayed {events} events: {len(diffs)} diff records in {Path(args.out) / TOPICS['diff']}/, "
          f"{dead} dead letters in {Path(args.out) / TOPICS['dead-letter']}/")
    if args.report:
        from whatif.report import write_report

        write_report(diffs, args.report)
        print(f"report: {args.report}")
    return 0

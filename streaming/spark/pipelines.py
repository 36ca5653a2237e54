"""The job's two runs: the service (events topic -> Kafka, exactly once) and a replay (JSONL log -> files).

Both are `job.build_pipeline` between a source and a sink; the commands, the demo, the benchmarks and the
tests start them through these functions so that every caller runs the same query.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka.errors import KafkaError
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from streaming.core import group_state
from streaming.core.config import PipelineConfig
from streaming.core.local import clear_batches
from streaming.core.records import CONFORMANCE, DEAD_LETTER, DIFF, REPLAY_DIRS
from streaming.kafka.consumer import end_offsets
from streaming.kafka.topics import ServeTopics, unreachable
from streaming.spark.job import Step, await_query, build_pipeline, start_query
from streaming.spark.jsonl_sink import read_records

DEFAULT_TOPICS = ServeTopics()


def start_serve(
    spark: SparkSession,
    bootstrap: str,
    config: PipelineConfig,
    *,
    checkpoint: str | os.PathLike[str],
    topics: ServeTopics = DEFAULT_TOPICS,
    once: bool = False,
    max_events_per_batch: int | None = None,
    kafka_options: Mapping[str, str] | None = None,
    sink_options: Mapping[str, str] | None = None,
    step: Step = group_state.step,
) -> StreamingQuery:
    """Start the service's streaming query (topics must exist); the caller waits for or stops it.

    The source reads the events topic from the earliest offset on a new checkpoint; `once` processes what
    is there when it starts, then stops (Trigger.AvailableNow). `sink_options`: the exactly-once sink's own
    options (`streaming.spark.kafka_sink`, e.g. ``spillBytesPerTask``). `step`: see `job.build_pipeline`."""
    client = {f"kafka.{k}": v for k, v in (kafka_options or {}).items()}
    client["kafka.bootstrap.servers"] = bootstrap
    reader = (spark.readStream.format("rebalance-kafka").options(**client)
              .option("subscribe", topics.events).option("startingOffsets", "earliest")
              .option("maxEventBytes", str(config.limits.max_event_bytes)))
    if max_events_per_batch:
        reader = reader.option("maxOffsetsPerTrigger", str(max_events_per_batch))
    sinks = {DIFF: topics.diffs, DEAD_LETTER: topics.dead_letter, CONFORMANCE: topics.conformance}
    output = build_pipeline(spark, reader.load(), config, sinks,
                            source="kafka", step=step)
    return start_query(output, "rebalance-kafka-eos", {**(sink_options or {}), **client}, str(checkpoint), once=once)


def serve_events(spark: SparkSession, bootstrap: str, config: PipelineConfig, *, progress=sys.stderr,
                 **kwargs: Any) -> int:
    """`start_serve` and wait for it (with `once=True`: until caught up); returns the events read. While no
    batch completes, the broker is checked at each heartbeat and an outage is reported with its duration."""
    options = kwargs.get("kafka_options")
    events_topic = kwargs.get("topics", DEFAULT_TOPICS).events

    def probe() -> str | None:
        problem = unreachable(bootstrap, options)
        return None if problem is None else f"Kafka at {bootstrap} unreachable ({problem})"

    def log_end() -> dict[str, dict[str, int]] | None:
        try:
            return {events_topic: {str(p): o for p, o in end_offsets(bootstrap, events_topic, options).items()}}
        except (KafkaError, OSError):
            return None

    return await_query(start_serve(spark, bootstrap, config, **kwargs), "serve", out=progress, probe=probe,
                       log_end=log_end)


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
    step: Step = group_state.step,
) -> int:
    """Run the pipeline over `log` until every line is processed; returns the number of events read.

    Without `checkpoint` every run starts from the first line (a temporary checkpoint, earlier batch files
    removed) and reads a last line that has no newline; with one it resumes, and such a line is left for a
    later run (`core.lines`). `step`: see `job.build_pipeline`."""
    out = Path(out)
    own = checkpoint is None
    ckpt = Path(tempfile.mkdtemp(prefix="rebalance-replay-ckpt-")) if own else Path(checkpoint)
    try:
        if _fresh(ckpt):  # a new run: batch ids restart at 0, so earlier batch files would mix in
            clear_batches(out)
        reader = (spark.readStream.format("rebalance-jsonl").option("path", str(log))
                  .option("maxEventBytes", str(config.limits.max_event_bytes))
                  .option("completeLog", str(own).lower()))  # a run that cannot resume reads an unended last line
        if max_events_per_batch:
            reader = reader.option("maxOffsetsPerTrigger", str(max_events_per_batch))
        output = build_pipeline(spark, reader.load(), config, REPLAY_DIRS, source="files", step=step)
        query = start_query(output, "rebalance-files", {"path": str(out)}, str(ckpt), once=True)
        return await_query(query, "replay", out=progress)
    finally:
        if own:
            shutil.rmtree(ckpt, ignore_errors=True)


def read_output(out: str | os.PathLike[str], kind: str = DIFF) -> list[dict[str, Any]]:
    """The records a replay wrote for `kind` (one of `KINDS`), in batch order."""
    return [json.loads(line) for line in read_records(Path(out) / REPLAY_DIRS[kind])]

"""`rebalance serve`: the long-running service, events topic -> diffs and dead-letter topics, exactly once.

The Kafka source reads the events topic from the earliest offset on a new checkpoint; the exactly-once
sink writes each micro-batch's diffs and dead letters in one Kafka transaction, so `read_committed`
consumers see every record once across crashes and restarts. `--once` processes what is in the topic
when it starts, then exits (Trigger.AvailableNow); otherwise micro-batches run back to back.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from streaming.cli import UsageError
from streaming.config import PipelineConfig
from streaming.job import await_query, build_pipeline, check_batch_size, pipeline_config, start_query
from streaming.kafka_options import parse_cli_options, to_kafka_python


@dataclass(frozen=True)
class ServeTopics:
    events: str = "rebalance.events"
    diffs: str = "rebalance.diffs"
    dead_letter: str = "rebalance.dead-letter"
    partitions: Mapping[str, int] = field(default_factory=lambda: {"events": 2, "diffs": 2, "dead_letter": 1})


def ensure_serve_topics(bootstrap: str, topics: ServeTopics, kafka_options: Mapping[str, str] | None = None) -> None:
    """Create the events, diffs and dead-letter topics if missing (existing ones are left as they are)."""
    from streaming.broker import ensure_topics

    n = topics.partitions
    ensure_topics(bootstrap, {topics.events: n["events"], topics.diffs: n["diffs"],
                              topics.dead_letter: n["dead_letter"]}, kafka_options=kafka_options)


def start_serve(
    spark: SparkSession,
    bootstrap: str,
    config: PipelineConfig,
    *,
    checkpoint: str | os.PathLike[str],
    topics: ServeTopics = ServeTopics(),
    once: bool = False,
    max_events_per_batch: int | None = None,
    kafka_options: Mapping[str, str] | None = None,
) -> StreamingQuery:
    """Start the service's streaming query (topics must exist); the caller waits for or stops it."""
    client = {f"kafka.{k}": v for k, v in (kafka_options or {}).items()}
    client["kafka.bootstrap.servers"] = bootstrap
    reader = (spark.readStream.format("rebalance-kafka").options(**client)
              .option("subscribe", topics.events).option("startingOffsets", "earliest"))
    if max_events_per_batch:
        reader = reader.option("maxOffsetsPerTrigger", str(max_events_per_batch))
    output = build_pipeline(spark, reader.load(), config, {"diff": topics.diffs, "dead-letter": topics.dead_letter},
                            source="kafka")
    return start_query(output, "rebalance-kafka-eos", client, str(checkpoint), once=once)


def serve_events(spark: SparkSession, bootstrap: str, config: PipelineConfig, *, progress=sys.stderr,
                 **kwargs) -> int:
    """`start_serve` and wait for it (with `once=True`: until caught up); returns the events read."""
    return await_query(start_serve(spark, bootstrap, config, **kwargs), "serve", out=progress)


def read_topic(bootstrap: str, topic: str, kafka_options: Mapping[str, str] | None = None, *,
               timeout_s: float = 120.0) -> list[Any]:
    """Every committed record of `topic` up to its current end (read_committed), per partition in order."""
    from kafka import KafkaConsumer, TopicPartition

    kwargs = to_kafka_python({**(kafka_options or {}), "bootstrap.servers": bootstrap}, "consumer")
    consumer = KafkaConsumer(**{**kwargs, "isolation_level": "read_committed", "enable_auto_commit": False,
                                "group_id": None})
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        consumer.assign(tps)
        consumer.seek_to_beginning()
        ends = consumer.end_offsets(tps)
        out: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: not readable up to its end within {timeout_s}s")
            for records in consumer.poll(timeout_ms=500).values():
                out.extend(r for r in records if r.offset < ends[TopicPartition(topic, r.partition)])
        return sorted(out, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()


def client_options(pairs: list[str], bootstrap: str) -> dict[str, str]:
    """`--kafka-option` pairs, checked against kafka-python's names; a bad one is a usage error."""
    try:
        options = parse_cli_options(pairs)
        to_kafka_python({**options, "bootstrap.servers": bootstrap}, "consumer")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    options.pop("bootstrap.servers", None)
    return options


def run(args: argparse.Namespace) -> int:
    config = pipeline_config(args.strategies)
    max_events = check_batch_size(args.max_events_per_batch)
    options = client_options(args.kafka_option, args.bootstrap)
    topics = ServeTopics(args.events_topic, args.diffs_topic, args.dead_letter_topic)
    from kafka.errors import KafkaError

    try:
        ensure_serve_topics(args.bootstrap, topics, options)
    except (KafkaError, OSError) as exc:
        print(f"rebalance serve: cannot use Kafka at {args.bootstrap}: {exc!r}", file=sys.stderr)
        return 1
    from streaming.spark_session import build_spark

    spark = build_spark(app_name="rebalance-serve")
    print(f"serving {topics.events} -> {topics.diffs}, {topics.dead_letter} on {args.bootstrap} "
          f"(checkpoint {args.checkpoint}{', once' if args.once else ''})", file=sys.stderr, flush=True)
    events = serve_events(spark, args.bootstrap, config, checkpoint=args.checkpoint, topics=topics,
                          once=args.once, max_events_per_batch=max_events, kafka_options=options)
    print(f"processed {events} events", file=sys.stderr, flush=True)
    return 0

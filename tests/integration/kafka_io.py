"""Small real-broker helpers for the integration tests: produce records, read a topic, run a query to the end."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def produce(bootstrap: str, topic: str, records: Iterable[tuple[int, bytes | None, bytes]]) -> None:
    """``(partition, key, value)`` records, acknowledged before returning."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for partition, key, value in records:
            producer.send(topic, key=key, value=value, partition=partition)
        producer.flush()
    finally:
        producer.close()


def consume_all(bootstrap: str, topic: str, *, isolation: str = "read_committed",
                timeout_s: float = 30.0, start: dict[int, int] | None = None) -> list[Any]:
    """Every record of ``topic`` up to its current end (last stable offset for read_committed), from the
    beginning or from ``start`` ({partition: offset})."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic))]
        consumer.assign(tps)
        consumer.seek_to_beginning()
        for partition, offset in (start or {}).items():
            consumer.seek(TopicPartition(topic, partition), offset)
        ends = consumer.end_offsets(tps)
        out: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            assert time.monotonic() < deadline, f"{topic}: not fully readable within {timeout_s}s"
            for records in consumer.poll(timeout_ms=500).values():
                out.extend(records)
        return sorted(out, key=lambda r: (r.partition, r.offset))
    finally:
        consumer.close()


def run_available_now(spark: Any, reader: Any, checkpoint: str) -> list[tuple[int, list[Any]]]:
    """Run ``reader`` (a DataStreamReader) with Trigger.AvailableNow; returns ``[(batch_id, rows)]``."""
    batches: list[tuple[int, list[Any]]] = []
    query = (reader.load().writeStream
             .foreachBatch(lambda df, batch_id: batches.append((batch_id, df.collect())))
             .option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    query.awaitTermination()  # raises the query's failure
    return [(b, rows) for b, rows in batches if rows]

"""Reading what the service wrote: one read_committed consumer set-up and one "read a topic to its end".

Every reader of our output topics (the demo, the report, the tests, the sink's own marker scan, the Spark
source) must see only committed transactions and must not join a consumer group (no offsets are committed
anywhere), so the settings live here once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from streaming.kafka.options import to_kafka_python


def committed_consumer(client_options: Mapping[str, Any], **overrides: Any) -> Any:
    """A kafka-python consumer that reads committed records only and belongs to no group.

    ``client_options`` are Kafka property names including ``bootstrap.servers``; ``overrides`` are
    kafka-python keyword arguments (e.g. ``auto_offset_reset="none"``)."""
    from kafka import KafkaConsumer

    kwargs = to_kafka_python(client_options, "consumer")
    kwargs.update(isolation_level="read_committed", enable_auto_commit=False, group_id=None, **overrides)
    return KafkaConsumer(**kwargs)


def end_offsets(bootstrap: str, topic: str, kafka_options: Mapping[str, Any] | None = None) -> dict[int, int]:
    """``{partition: end offset}`` of ``topic`` as a read_committed reader sees it (the last stable offset)."""
    from kafka import TopicPartition

    consumer = committed_consumer({**(kafka_options or {}), "bootstrap.servers": bootstrap},
                                  allow_auto_create_topics=False)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        return {tp.partition: offset for tp, offset in consumer.end_offsets(tps).items()}
    finally:
        consumer.close()


def iter_to_end(bootstrap: str, topic: str, kafka_options: Mapping[str, Any] | None = None, *,
                timeout_s: float = 120.0, missing_ok: bool = True) -> Iterator[Any]:
    """Every committed record of ``topic`` from its beginning up to the end offsets seen at the start,
    per partition in offset order (partitions one after another are not interleaved by time).

    A topic that does not exist yields nothing (``missing_ok``) or raises ValueError; records not readable
    within ``timeout_s`` (a transaction still open) raise TimeoutError naming the partitions behind.
    """
    from kafka import TopicPartition

    consumer = committed_consumer({**(kafka_options or {}), "bootstrap.servers": bootstrap},
                                  auto_offset_reset="earliest", allow_auto_create_topics=False)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not tps and not missing_ok:
            raise ValueError(f"topic {topic!r} does not exist")
        for tp in tps:
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            yield from read_until(consumer, tp, consumer.end_offsets([tp])[tp], timeout_s)
    finally:
        consumer.close()


def read_until(consumer: Any, tp: Any, end: int, timeout_s: float) -> Iterator[Any]:
    """The records of `tp` (assigned to `consumer`) from its position up to offset `end`, exclusive. Raises
    TimeoutError when they are not all readable within `timeout_s` (for `read_committed`: a transaction
    still open)."""
    deadline = time.monotonic() + timeout_s
    while consumer.position(tp) < end:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{tp.topic}[{tp.partition}]: not readable up to offset {end} within "
                               f"{timeout_s:.0f} s (a transaction still open, or the broker unreachable?)")
        for records in consumer.poll(timeout_ms=500).values():
            yield from (r for r in records if r.offset < end)


def read_to_end(bootstrap: str, topic: str, kafka_options: Mapping[str, Any] | None = None, *,
                timeout_s: float = 120.0) -> list[Any]:
    """`iter_to_end` as a list (a missing topic: an empty list)."""
    return list(iter_to_end(bootstrap, topic, kafka_options, timeout_s=timeout_s))

"""Produce a captured log into the events topic (`rebalance load`).

Each line becomes one record keyed by its group id and placed with Kafka's producer partitioning
(`assignors.partitioner.partition_for_key`, i.e. murmur2), so every group's events sit on one partition in log
order -- the order the service applies them in. Order within a partition is kept by the idempotent producer
(acks=all; retries cannot reorder). The record timestamp is the event's ``ts`` when it has a valid one. Lines
without a usable group id (bad JSON, missing group) still go in, unkeyed, on partition 0, so the service
dead-letters them with their position instead of them vanishing here. Lines are those `replay` reads
(`core.lines`): an over-long line is one record, its prefix with its true size in the `SIZE_HEADER` header,
so `serve` dead-letters it exactly as `replay` does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from assignors.partitioner import partition_for_key
from streaming.core.config import Limits
from streaming.core.events import group_key
from streaming.core.lines import SIZE_HEADER, read_lines
from streaming.kafka.options import to_kafka_python

DEFAULT_PARTITIONS = 2
_DEFAULT_LIMITS = Limits()
_MAX_TS = 253402300799999  # 9999-12-31: anything later is not a plausible epoch-ms event time


def event_timestamp(line: bytes) -> int | None:
    """The event's ``ts`` (epoch ms) when it is a plausible integer, else None (broker time)."""
    if b'"ts"' not in line:
        return None
    try:
        ts = json.loads(line).get("ts")
    except (ValueError, AttributeError):
        return None
    if isinstance(ts, int) and not isinstance(ts, bool) and 0 <= ts <= _MAX_TS:
        return ts
    return None


@dataclass(frozen=True)
class LoadRecord:
    """What `load` produces for one line."""

    key: bytes | None
    value: bytes
    partition: int
    timestamp_ms: int | None
    headers: list[tuple[str, bytes]]


def log_records(path: str | Path, n_partitions: int, limits: Limits = _DEFAULT_LIMITS) -> Iterator[LoadRecord]:
    """The records of a log, one per non-blank line read by `core.lines.read_lines` (the reader `replay`
    uses, so both see the same lines); an over-long line is its prefix with its true size in `SIZE_HEADER`.
    The whole file is read, a last line without newline included: `load` is a one-shot copy."""
    with open(path, "rb") as f:
        for line in read_lines(f, limits.max_event_bytes, complete=True):
            size = line.size if line.cut else None
            group = group_key(line.value, None, size=size, max_event_bytes=limits.max_event_bytes,
                              max_name_chars=limits.max_name_chars)
            key = group.encode("utf-8") if group else None
            yield LoadRecord(
                key=key, value=line.value, partition=partition_for_key(key, n_partitions) if key else 0,
                timestamp_ms=None if size else event_timestamp(line.value),
                headers=[(SIZE_HEADER, str(size).encode())] if size else [],
            )


def load_log(path: str | Path, bootstrap: str, topic: str = "rebalance.events", *,
             kafka_options: Mapping[str, str] | None = None, partitions: int = DEFAULT_PARTITIONS,
             progress: IO[str] | None = None, limits: Limits = _DEFAULT_LIMITS) -> int:
    """Produce every line of ``path`` into ``topic`` (created with ``partitions`` if missing); returns the count.

    ``progress``: where to report lines/s every 2 s and a summary (the CLI passes stderr)."""
    from kafka import KafkaProducer

    from streaming.kafka.topics import ensure_topics

    path = Path(path)
    options = dict(kafka_options or {})
    ensure_topics(bootstrap, {topic: partitions}, kafka_options=options)
    kwargs = to_kafka_python({**options, "bootstrap.servers": bootstrap}, "producer")
    kwargs.update(acks="all", enable_idempotence=True, linger_ms=kwargs.get("linger_ms", 20))
    kwargs.setdefault("max_request_size", 8 * 1024 * 1024)
    producer = KafkaProducer(**kwargs)
    try:
        n_parts = len(producer.partitions_for(topic))
        count, started, shown = 0, time.monotonic(), time.monotonic()
        for rec in log_records(path, n_parts, limits):
            producer.send(topic, value=rec.value, key=rec.key, partition=rec.partition,
                          timestamp_ms=rec.timestamp_ms, headers=rec.headers)
            count += 1
            if progress is not None and time.monotonic() - shown >= 2:
                shown = time.monotonic()
                rate = count / max(shown - started, 1e-9)
                print(f"loaded {count} events ({rate:,.0f}/s)", file=progress, flush=True)
        producer.flush()
    finally:
        producer.close()
    if progress is not None:
        elapsed = time.monotonic() - started
        print(f"loaded {count} events into {topic} ({n_parts} partitions) in {elapsed:.1f}s "
              f"({count / max(elapsed, 1e-9):,.0f}/s)", file=progress, flush=True)
    return count

"""Spilling a writer's records to a staging topic and streaming them back: bounded memory for big batches.

The exactly-once sink (`streaming.spark.kafka_sink`) ships each task's rows to the driver, which writes them
in one transaction. A task whose rows would not fit in memory writes them here instead, with a plain
idempotent producer (staged records are never read by consumers of the output, so they need no
transaction), and ships only `Staged` references; the driver's commit reads them back with `read_staged` in
bounded chunks inside its transaction. A crashed or retried attempt's staged records are simply never
referenced, and the topic's retention removes them.

A staged record keeps the row's key as its key and carries ``target topic + value`` in its value (see
`_frame`), so a row needs no Kafka headers and a null value (a tombstone) survives the trip.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from streaming.kafka.consumer import read_until
from streaming.kafka.options import to_kafka_python
from streaming.kafka.topics import DEFAULT_TOPIC_CONFIGS, ensure_topics
from streaming.kafka.transactions import SEND_CHUNK_BYTES, Record

# One partition per concurrently running task of a sink keeps each attempt's records consecutive (one offset
# range per task, one seek on the driver). The sink runs spark.sql.shuffle.partitions tasks (2 in this
# project, frozen in the checkpoint); 8 leaves room for larger settings and for several queries sharing the
# topic without many idle partitions. More concurrent tasks than partitions only cost more ranges.
STAGING_PARTITIONS = 8
# Staged records matter only between a task's write and its batch's commit (seconds to minutes): a later
# re-run of the batch stages its rows again. Finite retention removes what failed attempts left behind;
# a day covers any commit, and segment.ms lets retention act within an hour of that instead of after
# Kafka's default 7-day segment roll.
STAGING_TOPIC_CONFIGS = {**DEFAULT_TOPIC_CONFIGS, "retention.ms": str(24 * 3600 * 1000),
                         "segment.ms": str(3600 * 1000)}
_MAX_REQUEST = int(DEFAULT_TOPIC_CONFIGS["max.message.bytes"])  # a row as big as our topics accept
_FOLD_EVERY = 4096  # at most this many sends (and `SEND_CHUNK_BYTES`) between flushes, which bound the buffer
_CHUNK_RECORDS = 256  # records per poll when reading back (fetches are also bounded by max_partition_fetch_bytes)
_ensured: set[tuple[str, str]] = set()  # (bootstrap, staging topic) known to exist, per process


@dataclass
class Staged:
    """Where one task attempt's rows are: ``ranges`` of offsets ``[start, end)`` of one partition, in row order."""

    topic: str
    partition: int
    count: int = 0
    ranges: list[tuple[int, int]] = field(default_factory=list)

    def add(self, offset: int) -> None:
        """Record the next row's offset: extends the last range when consecutive (the usual case)."""
        if self.ranges and self.ranges[-1][1] == offset:
            self.ranges[-1] = (self.ranges[-1][0], offset + 1)
        else:
            self.ranges.append((offset, offset + 1))
        self.count += 1


def _frame(topic: str, value: bytes | None) -> bytes:
    """``len(topic) (2 bytes) + topic + (0 | 1 + value)``: the target topic, and None kept apart from b""."""
    name = topic.encode("utf-8")
    return struct.pack(">H", len(name)) + name + (b"\x00" if value is None else b"\x01" + value)


def _unframe(key: bytes | None, framed: bytes) -> Record:
    (n,) = struct.unpack_from(">H", framed)
    topic = framed[2:2 + n].decode("utf-8")
    return topic, key, (framed[3 + n:] if framed[2 + n:3 + n] == b"\x01" else None)


class Stager:
    """Stages one task attempt's rows, in the order given, on a partition chosen from the writer and task.

    Memory: a flush after every `SEND_CHUNK_BYTES` (or `_FOLD_EVERY` records) bounds what is in flight, and
    turns the acknowledged offsets into ranges. `close()` flushes and returns the references."""

    def __init__(self, client_options: Mapping[str, Any], topic: str, writer_id: str, task: int) -> None:
        from kafka import KafkaProducer

        bootstrap = client_options["bootstrap.servers"]
        if (bootstrap, topic) not in _ensured:
            ensure_topics(bootstrap, {topic: STAGING_PARTITIONS}, configs=STAGING_TOPIC_CONFIGS,
                          kafka_options=client_options)
            _ensured.add((bootstrap, topic))
        kwargs = to_kafka_python(client_options, "producer")
        kwargs.pop("transactional_id", None)
        kwargs.setdefault("max_request_size", _MAX_REQUEST)
        kwargs.update(enable_idempotence=True, acks="all")  # no duplicates or reordering on retries
        self.producer = KafkaProducer(**kwargs)
        partitions = sorted(self.producer.partitions_for(topic))
        # crc32, not hash(): the same on every worker; the writer id spreads queries sharing the topic
        self.staged = Staged(topic, partitions[(zlib.crc32(writer_id.encode()) + task) % len(partitions)])
        self.pending: list[Any] = []
        self.unflushed = 0

    def send(self, record: Record) -> None:
        topic, key, value = record
        self.pending.append(self.producer.send(self.staged.topic, key=key, value=_frame(topic, value),
                                               partition=self.staged.partition))
        self.unflushed += len(key or b"") + len(value or b"")
        if len(self.pending) >= _FOLD_EVERY or self.unflushed >= SEND_CHUNK_BYTES:
            self._fold()

    def _fold(self) -> None:
        self.producer.flush()
        for future in self.pending:
            self.staged.add(future.get().offset)  # raises the send's error, if any: the task fails and retries
        self.pending.clear()
        self.unflushed = 0

    def close(self) -> Staged:
        try:
            self._fold()
            return self.staged
        finally:
            self.producer.close()

    def abort(self) -> None:
        """Stop without waiting: whatever was sent stays unreferenced."""
        self.producer.close(timeout=0)


def read_staged(client_options: Mapping[str, Any], staged: Staged, *, timeout_s: float = 120.0) -> Iterator[Record]:
    """The rows of `staged`, in order, read in chunks of at most `_CHUNK_RECORDS` records (one fetch of at most
    `max_partition_fetch_bytes`, or one record if bigger). read_uncommitted suffices: staged records are not
    transactional. Raises RuntimeError when a range is no longer there (retention) and TimeoutError when it is
    not readable within `timeout_s`; the commit then fails and the batch's re-run stages its rows again."""
    from kafka import KafkaConsumer, TopicPartition

    kwargs = to_kafka_python(client_options, "consumer")
    kwargs.update(isolation_level="read_uncommitted", enable_auto_commit=False, group_id=None,
                  allow_auto_create_topics=False, max_poll_records=_CHUNK_RECORDS)
    consumer = KafkaConsumer(**kwargs)
    tp = TopicPartition(staged.topic, staged.partition)
    try:
        consumer.assign([tp])
        read = 0
        for start, end in staged.ranges:
            if consumer.beginning_offsets([tp])[tp] > start:
                raise RuntimeError(f"staged rows {staged.topic}[{staged.partition}] {start}..{end} were deleted "
                                   "(retention) before the commit")
            consumer.seek(tp, start)
            for r in read_until(consumer, tp, end, timeout_s):
                if r.offset >= start:
                    read += 1
                    yield _unframe(r.key, r.value)
        if read != staged.count:
            raise RuntimeError(f"staged rows {staged.topic}[{staged.partition}]: read {read}, expected "
                               f"{staged.count}")
    finally:
        consumer.close()

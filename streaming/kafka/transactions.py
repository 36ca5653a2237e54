"""Exactly-once writes for `read_committed` readers: a batch of records and a marker naming the batch, in ONE
Kafka transaction, under a transactional id that fences earlier attempts of the same batch.

Shared by the Spark sink (`streaming.spark.kafka_sink`, where the pattern is explained in full) and
`rebalance capture --events-topic`: a writer finds its last committed batch in the marker topic
(`last_marker`), takes a producer for the next batch (`batch_producer`) and commits the batch's records plus
its marker together. Why a fresh transactional id per batch: a producer id that ever aborted must not write
again on noida-db 0.2.3 (later fetches keep reporting the abort), so no id is reused across batches.

`write_batch` is the whole protocol, used by both writers. It checks each commit by reading its marker back:
noida-db killed while a transaction is open aborts that transaction when it restarts, and still answers the
producer's commit with success (measured: the marker and records then read back as aborted). Apache Kafka
keeps an open transaction across a broker restart; there the check costs one fetch per batch.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from streaming.kafka.consumer import committed_consumer, read_until
from streaming.kafka.options import to_kafka_python

log = logging.getLogger(__name__)

MAX_FENCING_ATTEMPTS = 1000
LOST_COMMIT_ATTEMPTS = 5  # commits of one batch whose marker the broker aborted, before the batch fails
Record = tuple[str, bytes | None, bytes | None]  # (topic, key, value)
# kafka-python 3 has no `buffer_memory` bound: `send` never blocks, so a writer faster than the broker buffers
# everything it sends. Writers flush after this many bytes, which bounds their buffers to about one chunk.
SEND_CHUNK_BYTES = 16 * 1024 * 1024
_MARKER_WINDOW = 64


def transactional_ids(writer_id: str, batch_id: int) -> Iterator[str]:
    """The transactional ids attempts of one batch use, in order (each attempt takes the first fresh one)."""
    yield f"{writer_id}-{batch_id}"
    for i in range(1, MAX_FENCING_ATTEMPTS):
        yield f"{writer_id}-{batch_id}-{i}"


def batch_producer(client_options: Mapping[str, Any], writer_id: str, batch_id: int) -> Any:
    """A transactional producer for `batch_id` whose `init_transactions` aborted whatever an earlier attempt of
    the batch left open: the first of `transactional_ids` the broker has never seen (epoch 0)."""
    from kafka import KafkaProducer

    kwargs = to_kafka_python(client_options, "producer")
    kwargs.setdefault("max_request_size", 8 * 1024 * 1024)
    # kafka-python waits retry_backoff_ms (100) between the steps of init_transactions; 20 ms (Java's
    # backoff for CONCURRENT_TRANSACTIONS) cuts a commit from ~230 to ~80 ms, which is service latency.
    kwargs.setdefault("retry_backoff_ms", 20)
    # a commit sends a whole micro-batch at once; kafka-python's 16 KiB batches hold ~30 diffs each. 256 KiB ones
    # (well under the broker's default 1 MB message limit) cut the producer's CPU for a 19,322-diff, 10.6 MB
    # commit from ~0.65 to ~0.41 s (wall time is bound by the broker).
    kwargs.setdefault("batch_size", 256 * 1024)
    for tid in transactional_ids(writer_id, batch_id):
        producer = KafkaProducer(**{**kwargs, "transactional_id": tid})
        producer.init_transactions()  # aborts what an earlier attempt with this id left open
        if producer._transaction_manager.producer_id_and_epoch.epoch == 0:
            return producer
        producer.close()
    raise RuntimeError(f"{writer_id}: batch {batch_id} attempted {MAX_FENCING_ATTEMPTS} times")


def last_marker(client_options: Mapping[str, Any], marker_topic: str, key: bytes) -> dict[str, Any] | None:
    """The committed marker (JSON object with a "batch" number) of the newest batch written under `key`,
    scanning partition 0 of the marker topic backwards from its end; None when there is none."""
    from kafka import TopicPartition

    consumer = committed_consumer(client_options)
    tp = TopicPartition(marker_topic, 0)
    try:
        consumer.assign([tp])
        end = consumer.end_offsets([tp])[tp]
        floor = consumer.beginning_offsets([tp])[tp]
        window = _MARKER_WINDOW
        while end > floor:
            start = max(floor, end - window)
            consumer.seek(tp, start)
            found: dict[str, Any] | None = None
            deadline = time.monotonic() + 60
            while consumer.position(tp) < end:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"marker topic {marker_topic} unreadable up to offset {end}")
                for records in consumer.poll(timeout_ms=1000).values():
                    for r in records:
                        if r.key == key and r.offset < end:
                            marker = json.loads(r.value)
                            if found is None or marker["batch"] > found["batch"]:
                                found = marker
            if found is not None:
                return found
            end, window = start, window * 4
        return None
    finally:
        consumer.close()


def write_batch(client_options: Mapping[str, Any], writer_id: str, batch_id: int,
                records: Callable[[], Iterable[Record]], marker_topic: str, marker: Mapping[str, Any], *,
                before_commit: Callable[[Any], None] = lambda producer: None,
                after_commit: Callable[[], None] = lambda: None) -> bool:
    """Batch `batch_id` of `writer_id` committed exactly once: fence earlier attempts (`batch_producer`), return
    False if the marker topic already holds the batch, else commit `records()` with the marker
    ``{"batch": batch_id, **marker}`` and read the marker back. A marker the broker aborted after answering the
    commit with success (see the module doc) means the batch is written again, under its next transactional
    id; `records` is called once per attempt. The hooks let crash tests stop between the steps."""
    key = writer_id.encode()
    for _ in range(LOST_COMMIT_ATTEMPTS):
        producer = batch_producer(client_options, writer_id, batch_id)
        try:
            last = last_marker(client_options, marker_topic, key)
            if last is not None and batch_id <= int(last["batch"]):
                log.info("%s: batch %d already committed (marker %d), skipped", writer_id, batch_id, last["batch"])
                return False
            offset = commit_batch(producer, records(), marker_topic, key, {"batch": batch_id, **marker},
                                  before_commit, after_commit)
        finally:
            producer.close()
        if marker_committed(client_options, marker_topic, offset):
            return True
        log.warning("%s: the broker aborted batch %d after committing it (restarted?); writing it again",
                    writer_id, batch_id)
    raise RuntimeError(f"{writer_id}: batch {batch_id}'s commit was aborted by the broker {LOST_COMMIT_ATTEMPTS} times")


def marker_committed(client_options: Mapping[str, Any], marker_topic: str, offset: int, timeout_s: float = 60.0
                     ) -> bool:
    """Whether the marker at `offset` (partition 0) is committed: a read_committed reader returns it, or moves
    past it once the transaction's abort is written. TimeoutError while the transaction's outcome is not
    written within `timeout_s` (the batch then fails, and its re-run fences the transaction)."""
    from kafka import TopicPartition

    consumer = committed_consumer(client_options)
    tp = TopicPartition(marker_topic, 0)
    try:
        consumer.assign([tp])
        consumer.seek(tp, offset)
        return any(r.offset == offset for r in read_until(consumer, tp, offset + 1, timeout_s))
    finally:
        consumer.close()


def commit_batch(producer: Any, records: Iterable[Record], marker_topic: str, key: bytes, marker: Mapping[str, Any],
                 before_commit: Callable[[Any], None], after_commit: Callable[[], None]) -> int:
    """`records` (topic, key, value) and the `marker` (partition 0 of the marker topic, keyed by the writer)
    in one transaction of `producer` (from `batch_producer`); aborted if anything fails. Returns the marker's
    offset. `records` may be a stream (staged rows read back): the producer's buffer holds at most about
    `SEND_CHUNK_BYTES`. The hooks: see `write_batch`."""
    producer.begin_transaction()
    try:
        unflushed = 0
        for topic, k, value in records:
            producer.send(topic, key=k, value=value)
            unflushed += len(k or b"") + len(value or b"")
            if unflushed >= SEND_CHUNK_BYTES:
                producer.flush()
                unflushed = 0
        sent = producer.send(marker_topic, key=key, value=json.dumps(dict(marker)).encode(), partition=0)
        before_commit(producer)
        producer.commit_transaction()
        after_commit()
    except BaseException:
        try:
            producer.abort_transaction()
        except Exception:  # the original error matters; fencing cleans up on the next attempt
            log.exception("abort after a failed transactional commit failed")
        raise
    return int(sent.get().offset)

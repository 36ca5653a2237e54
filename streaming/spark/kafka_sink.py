"""Exactly-once Kafka sink for Spark streaming through the Python Data Source API ("rebalance-kafka-eos").

Input columns: ``topic string, key string, value binary``; every row goes to its own topic, keyed by ``key``
(the group id) with Kafka's default murmur2 partitioning, so each group's records stay in order on one partition.

How exactly-once works
----------------------
Spark re-runs a micro-batch after a crash with the same batch id, offsets and state, so the sink sees the same
rows again (at-least-once). This sink turns that into exactly-once for ``read_committed`` consumers:

1. ``write()`` on the executors only collects rows into the task's commit message (in task order).
2. ``commit(messages, batchId)`` on the driver, after every task succeeded:
   a. fences earlier attempts of this batch: it calls ``init_transactions`` on the transactional ids
      ``<sink>-<batchId>``, ``<sink>-<batchId>-1``, ... in turn. That aborts any transaction a crashed attempt
      left open. It keeps the first id the broker has never seen (epoch 0) for this attempt.
   b. reads the last committed batch id from the marker topic (``read_committed``), and returns if
      ``batchId`` is not newer (the batch was committed before a crash hid that from Spark);
   c. else produces all rows (tasks in partition order, rows in task order) plus one marker record
      ``{"batch": batchId}`` in ONE Kafka transaction.

What a ``read_committed`` consumer sees, whatever the crash point:
- crash before or during ``write()`` / before the transaction commits: nothing of the batch (the open
  transaction is aborted by the next attempt's fencing, or by the broker after ``transaction.timeout.ms``);
  Spark re-runs the batch and it is committed once;
- crash after the transaction committed but before Spark logged the batch: every record once; the re-run
  finds the marker and writes nothing.
A ``read_uncommitted`` consumer may see records of aborted attempts. While a crashed attempt's transaction
is still open, ``read_committed`` consumers of those partitions wait (last stable offset) until it is fenced or
times out.

Why a fresh transactional id per batch instead of one per query: a producer id that ever aborted a transaction
must not write again, because noida-db 0.2.3 keeps reporting that aborted transaction in later fetches and
consumers would then drop every later record of the same producer id. Cost: one transactional id per non-empty
micro-batch on the broker, expired after ``transactional.id.expiration.ms`` (7 days by default).

The sink identity is ``<transactionalIdPrefix>-<query id>``; Spark keeps the query id in the checkpoint, so a
restart from the same checkpoint resumes the same marker sequence and a new checkpoint starts a fresh one.

Memory: the commit messages carry the batch's rows to the driver, so a batch's output must fit in driver
memory; that suits assignment diffs (one record per changed group per round). ``maxBytesPerTask`` (default
256 MiB) fails the batch with a clear error before that becomes a problem; lower ``maxOffsetsPerTrigger`` then.

Options: ``kafka.bootstrap.servers`` (required), other ``kafka.*`` client settings, ``markerTopic``
(default ``rebalance.sink-markers``, created with one partition and no retention if missing),
``transactionalIdPrefix`` (default ``rebalance-eos``), ``maxBytesPerTask``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql.datasource import CaseInsensitiveDict, DataSource, DataSourceStreamWriter, WriterCommitMessage
from pyspark.sql.types import Row, StructType

from streaming.kafka.options import kafka_client_options, to_kafka_python
from streaming.kafka.topics import ensure_topics
from streaming.kafka.transactions import batch_producer, commit_batch, last_marker
from streaming.spark.faults import pause_point
from streaming.spark.schemas import SINK_SCHEMA

log = logging.getLogger(__name__)

DEFAULT_MARKER_TOPIC = "rebalance.sink-markers"

Record = tuple[str, bytes | None, bytes | None]
_ensured: set[tuple[str, str]] = set()  # (bootstrap, marker topic) known to exist, per Python worker


@dataclass
class CollectedRows(WriterCommitMessage):
    """One task's output, shipped to the driver for the transactional commit."""

    partition_id: int
    query_id: str
    rows: list[Record] = field(default_factory=list)


class KafkaEosDataSource(DataSource):
    """``df.writeStream.format("rebalance-kafka-eos")``."""

    @classmethod
    def name(cls) -> str:
        return "rebalance-kafka-eos"

    def schema(self) -> str:
        return SINK_SCHEMA

    def streamWriter(self, schema: StructType, overwrite: bool) -> KafkaEosStreamWriter:
        return KafkaEosStreamWriter(self.options, schema)


class KafkaEosStreamWriter(DataSourceStreamWriter):
    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        options = CaseInsensitiveDict(options)  # Spark lower-cases option names
        missing = {"topic", "key", "value"} - set(schema.names)
        if missing:
            raise ValueError(f"rebalance-kafka-eos: input needs columns topic, key, value; missing {sorted(missing)}")
        self.client_options = kafka_client_options(options)
        to_kafka_python(self.client_options, "producer")  # validate on the driver, before any task runs
        self.marker_topic = options.get("markerTopic", DEFAULT_MARKER_TOPIC)
        self.prefix = options.get("transactionalIdPrefix", "rebalance-eos")
        self.max_bytes = int(options.get("maxBytesPerTask", str(256 * 1024 * 1024)))

    def write(self, iterator: Iterator[Row]) -> CollectedRows:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        query_id = (ctx.getLocalProperty("sql.streaming.queryId") if ctx else None) or "batch"
        out = CollectedRows(ctx.partitionId() if ctx else 0, query_id)
        size = 0
        for row in iterator:
            topic, key, value = row["topic"], row["key"], row["value"]
            if not topic:
                raise ValueError("rebalance-kafka-eos: a row has no topic")
            kb = key.encode("utf-8") if key is not None else None
            vb = bytes(value) if value is not None else None
            size += len(kb or b"") + len(vb or b"") + len(topic)
            if size > self.max_bytes:
                raise ValueError(f"rebalance-kafka-eos: task output exceeds maxBytesPerTask={self.max_bytes}; "
                                 "lower maxOffsetsPerTrigger (rows are held in memory until the commit)")
            out.rows.append((topic, kb, vb))
        return out

    def commit(self, messages: Sequence[CollectedRows | None], batchId: int) -> None:
        collected = sorted((m for m in messages if m is not None), key=lambda m: m.partition_id)
        rows = [r for m in collected for r in m.rows]
        if not rows:
            return  # nothing to make exactly-once; a re-run of an empty batch writes nothing either
        sink_id = f"{self.prefix}-{collected[0].query_id}"
        TransactionalCommit(self.client_options, self.marker_topic, sink_id).commit(batchId, rows)

    def abort(self, messages: Sequence[CollectedRows | None], batchId: int) -> None:
        """Nothing was written: tasks only collected rows, Kafka sees data only in `commit`."""


class TransactionalCommit:
    """Driver-side commit of one batch: fence earlier attempts, skip if already committed, else write all."""

    def __init__(self, client_options: Mapping[str, str], marker_topic: str, sink_id: str) -> None:
        self.client_options = dict(client_options)
        self.marker_topic = marker_topic
        self.sink_id = sink_id

    def commit(self, batch_id: int, rows: Sequence[Record]) -> bool:
        """Returns False when the batch was already committed (skipped)."""
        bootstrap = self.client_options["bootstrap.servers"]
        if (bootstrap, self.marker_topic) not in _ensured:
            ensure_topics(bootstrap, {self.marker_topic: 1}, kafka_options=self.client_options)
            _ensured.add((bootstrap, self.marker_topic))
        producer = batch_producer(self.client_options, self.sink_id, batch_id)
        try:
            last = self.last_committed_batch()
            if batch_id <= last:
                log.info("rebalance-kafka-eos: batch %d already committed (marker %d), skipped", batch_id, last)
                return False
            commit_batch(producer, rows, self.marker_topic, self.sink_id.encode(),
                         {"batch": batch_id, "records": len(rows)},
                         before_commit=lambda: pause_point("sink-before-commit", batch_id, before=producer.flush),
                         after_commit=lambda: pause_point("sink-after-commit", batch_id))  # crash tests only
            return True
        finally:
            producer.close()

    def last_committed_batch(self) -> int:
        """Newest committed marker of this sink (-1: none yet)."""
        marker = last_marker(self.client_options, self.marker_topic, self.sink_id.encode())
        return -1 if marker is None else int(marker["batch"])

"""Exactly-once Kafka sink for Spark streaming through the Python Data Source API ("rebalance-kafka-eos").

Input columns: ``topic string, key string, value binary``; every row goes to its own topic, keyed by ``key``
(the group id) with Kafka's default murmur2 partitioning, so each group's records stay in order on one partition.

How exactly-once works
----------------------
Spark re-runs a micro-batch after a crash with the same batch id, offsets and state, so the sink sees the same
rows again (at-least-once). This sink turns that into exactly-once for ``read_committed`` consumers:

1. ``write()`` on the executors only collects rows into the task's commit message (in task order); a task
   whose rows exceed ``spillBytesPerTask`` stages all of them in the staging topic instead (plain idempotent
   producer, not transactional) and its commit message carries only where they are (see Memory).
2. ``commit(messages, batchId)`` on the driver, after every task succeeded:
   a. fences earlier attempts of this batch: it calls ``init_transactions`` on the transactional ids
      ``<sink>-<batchId>``, ``<sink>-<batchId>-1``, ... in turn. That aborts any transaction a crashed attempt
      left open. It keeps the first id the broker has never seen (epoch 0) for this attempt.
   b. reads the last committed batch id from the marker topic (``read_committed``), and returns if
      ``batchId`` is not newer (the batch was committed before a crash hid that from Spark);
   c. else produces all rows (tasks in partition order, rows in task order; staged rows read back from the
      staging topic as they are sent) plus one marker record ``{"batch": batchId}`` in ONE Kafka transaction.

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

Memory: commit messages pass through the JVM to the Python driver (1 GiB heap, ``spark.driver.maxResultSize``),
so a task holds at most ``spillBytesPerTask`` (default 64 MiB, counting each row's bytes plus the Python objects
holding it) in memory. Past that it writes all its rows, in task order, to the staging topic
(`streaming.kafka.staging`) and ships ``(topic, partition, offset ranges, row count)`` of that attempt's
records; the driver's commit streams each range back in chunks inside the batch's transaction, flushing
every 16 MiB. So the driver holds the unspilled tasks' rows (under ``spillBytesPerTask`` each: 128 MiB for
this project's 2 sink tasks) plus about one chunk, whatever the batch's output. It spills instead of capping
a task's output: a cap would fail the batch, Spark re-runs a failed batch with the same offsets, so it would
fail forever (a crash loop), and ordinary input reaches any cap (2,000 invalid events of 1 MiB make 2,000 dead
letters of 900 KB). Staged rows are bounded only by the staging topic's disk. A crashed or retried attempt's
staged records are never referenced, so exactly-once is the same as without spilling. Limits: the whole batch
is still one transaction, which must commit within ``transaction.timeout.ms`` (kafka-python's default 60 s;
measured on the local broker, it staged 99 MB of 900 KB rows in 0.2 s and committed them in 0.7-1.2 s, so 2,000
such rows take about 20 s); and noida-db 0.2.3 ignores fetch size limits (a fetch asking for 1 MiB returned all
99 MB), so there the driver holds a staged range at once while reading it back; Apache Kafka returns at most
``max.partition.fetch.bytes`` (1 MiB) per fetch.

Options: ``kafka.bootstrap.servers`` (required), other ``kafka.*`` client settings, ``markerTopic``
(default ``rebalance.sink-markers``, created with one partition and no retention if missing),
``stagingTopic`` (default ``rebalance.sink-staging``, created with 8 partitions and one day's retention if
missing, see `streaming.kafka.staging`), ``spillBytesPerTask`` (default 64 MiB), ``transactionalIdPrefix``
(default ``rebalance-eos``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

from pyspark.sql.datasource import CaseInsensitiveDict, DataSource, DataSourceStreamWriter, WriterCommitMessage
from pyspark.sql.types import Row, StructType

from streaming.kafka.options import kafka_client_options, to_kafka_python
from streaming.kafka.staging import Staged, Stager, read_staged
from streaming.kafka.topics import ensure_topics
from streaming.kafka.transactions import Record, last_marker, write_batch
from streaming.spark.faults import pause_point
from streaming.spark.schemas import SINK_SCHEMA

log = logging.getLogger(__name__)

DEFAULT_MARKER_TOPIC = "rebalance.sink-markers"
DEFAULT_STAGING_TOPIC = "rebalance.sink-staging"
DEFAULT_SPILL_BYTES = 64 * 1024 * 1024
ROW_OVERHEAD = 200  # bytes of Python objects per held row (tuple, two bytes objects, topic str, list slot)

_ensured: set[tuple[str, str]] = set()  # (bootstrap, marker topic) known to exist, per Python worker


@dataclass
class CollectedRows(WriterCommitMessage):
    """One task's output, shipped to the driver for the transactional commit: the rows themselves, or where
    they were staged (`staged`, then `rows` is empty)."""

    partition_id: int
    query_id: str
    rows: list[Record] = field(default_factory=list)
    staged: Staged | None = None

    @property
    def count(self) -> int:
        return len(self.rows) if self.staged is None else self.staged.count


class KafkaEosDataSource(DataSource):
    """``df.writeStream.format("rebalance-kafka-eos")``."""

    @classmethod
    def name(cls) -> str:
        return "rebalance-kafka-eos"

    def schema(self) -> str:
        return SINK_SCHEMA

    def streamWriter(self, schema: StructType, overwrite: bool) -> KafkaEosStreamWriter:
        return KafkaEosStreamWriter(self.options, schema)


def _record(row: Row) -> Record:
    topic, key, value = row["topic"], row["key"], row["value"]
    if not topic:
        raise ValueError("rebalance-kafka-eos: a row has no topic")
    return topic, key.encode("utf-8") if key is not None else None, bytes(value) if value is not None else None


class KafkaEosStreamWriter(DataSourceStreamWriter):
    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        options = CaseInsensitiveDict(options)  # Spark lower-cases option names
        missing = {"topic", "key", "value"} - set(schema.names)
        if missing:
            raise ValueError(f"rebalance-kafka-eos: input needs columns topic, key, value; missing {sorted(missing)}")
        self.client_options = kafka_client_options(options)
        to_kafka_python(self.client_options, "producer")  # validate on the driver, before any task runs
        self.marker_topic = options.get("markerTopic", DEFAULT_MARKER_TOPIC)
        self.staging_topic = options.get("stagingTopic", DEFAULT_STAGING_TOPIC)
        self.prefix = options.get("transactionalIdPrefix", "rebalance-eos")
        self.spill_bytes = int(options.get("spillBytesPerTask", str(DEFAULT_SPILL_BYTES)))

    def sink_id(self, query_id: str) -> str:
        return f"{self.prefix}-{query_id}"

    def write(self, iterator: Iterator[Row]) -> CollectedRows:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        query_id = (ctx.getLocalProperty("sql.streaming.queryId") if ctx else None) or "batch"
        batch_id = ctx.getLocalProperty("streaming.sql.batchId") if ctx else None
        return self.collect(map(_record, iterator), ctx.partitionId() if ctx else 0, query_id, batch_id)

    def collect(self, records: Iterable[Record], partition_id: int, query_id: str,
                batch_id: int | str | None = None) -> CollectedRows:
        """One task's commit message: its records in memory up to `spill_bytes`, past that all of them staged."""
        out = CollectedRows(partition_id, query_id)
        size, stager = 0, None
        try:
            for record in records:
                if stager is not None:
                    stager.send(record)
                    continue
                out.rows.append(record)
                size += len(record[0]) + len(record[1] or b"") + len(record[2] or b"") + ROW_OVERHEAD
                if size > self.spill_bytes:
                    stager = Stager(self.client_options, self.staging_topic, self.sink_id(query_id), partition_id)
                    held, out.rows = out.rows, []
                    for r in held:
                        stager.send(r)
                    del held  # the rest streams through the stager: memory stays at the threshold
        except BaseException:
            if stager is not None:
                stager.abort()
            raise
        if stager is not None:
            out.staged = stager.close()
            pause_point("sink-staged", batch_id)  # crash tests only
        return out

    def commit(self, messages: Sequence[CollectedRows | None], batchId: int) -> None:
        collected = sorted((m for m in messages if m is not None), key=lambda m: m.partition_id)
        count = sum(m.count for m in collected)
        if not count:
            return  # nothing to make exactly-once; a re-run of an empty batch writes nothing either

        def records() -> Iterator[Record]:  # lazily, task by task: staged rows are read back as they are sent
            return chain.from_iterable(m.rows if m.staged is None else read_staged(self.client_options, m.staged)
                                       for m in collected)

        TransactionalCommit(self.client_options, self.marker_topic, self.sink_id(collected[0].query_id)).commit(
            batchId, records, count)

    def abort(self, messages: Sequence[CollectedRows | None], batchId: int) -> None:
        """Nothing was written to the output: tasks only collected or staged rows, which stay unreferenced."""


class TransactionalCommit:
    """Driver-side commit of one batch: fence earlier attempts, skip if already committed, else write all."""

    def __init__(self, client_options: Mapping[str, str], marker_topic: str, sink_id: str) -> None:
        self.client_options = dict(client_options)
        self.marker_topic = marker_topic
        self.sink_id = sink_id

    def commit(self, batch_id: int, rows: Callable[[], Iterable[Record]], count: int) -> bool:
        """Writes `rows()` (`count` of them; called once per attempt, and not at all if the batch was committed
        before); False when already committed. The protocol: `streaming.kafka.transactions.write_batch`."""
        bootstrap = self.client_options["bootstrap.servers"]
        if (bootstrap, self.marker_topic) not in _ensured:
            ensure_topics(bootstrap, {self.marker_topic: 1}, kafka_options=self.client_options)
            _ensured.add((bootstrap, self.marker_topic))
        return write_batch(self.client_options, self.sink_id, batch_id, rows, self.marker_topic, {"records": count},
                           before_commit=lambda producer: pause_point("sink-before-commit", batch_id,
                                                                      before=producer.flush),
                           after_commit=lambda: pause_point("sink-after-commit", batch_id))  # crash tests only

    def last_committed_batch(self) -> int:
        """Newest committed marker of this sink (-1: none yet)."""
        marker = last_marker(self.client_options, self.marker_topic, self.sink_id.encode())
        return -1 if marker is None else int(marker["batch"])

"""Kafka as a Spark streaming source through PySpark's Python Data Source API ("rebalance-kafka").

Spark's JVM Kafka connector is not available here, so this reader does the same job with kafka-python and
mirrors the connector's contract: the same output schema (that of ``includeHeaders=true``), the same
``startingOffsets`` JSON, the same offset JSON in the checkpoint (``{"topic": {"0": 23}}``),
``maxOffsetsPerTrigger`` admission control and ``failOnDataLoss``.

Design (docs/spark-notes.md §3, §4):
- The driver only asks for metadata and ListOffsets per trigger (`latestOffset`), so an idle trigger costs
  two small round trips.
- One Spark task per topic-partition reads ``[from, until)`` with a consumer cached per Python worker
  (``spark.python.worker.reuse``) and yields Arrow record batches.
- Consumers use ``read_committed``: end offsets are the last stable offset and aborted transactional records
  are never returned, so a transactional upstream (our own exactly-once sink) is read exactly once.
- Ranges are a pure function of the offsets Spark logged, so a batch re-run after a crash reads the same
  records. Partitions that appear while running start at offset 0.

Options: ``kafka.bootstrap.servers`` (required), ``subscribe`` (one topic, required),
``startingOffsets`` (``earliest`` | ``latest`` | JSON, -2 = earliest, -1 = latest; default latest),
``maxOffsetsPerTrigger``, ``failOnDataLoss`` (default true), ``pollTimeoutMs`` (default 120000),
``maxRecordsPerBatch`` (Arrow batch rows, default 10000), ``maxBytesPerBatch`` (Arrow batch value bytes, default
32 MiB), ``maxEventBytes`` (a longer value is passed on as `core.lines`' prefix with its true size in
``SIZE_HEADER``, as `load` produces an over-long line: no event the job will reject travels whole through
Spark; default: no cut), and any other ``kafka.*`` client setting.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pyspark.sql.datasource import CaseInsensitiveDict, DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from streaming.core.lines import PREFIX_BYTES, SIZE_HEADER
from streaming.kafka.consumer import committed_consumer
from streaming.kafka.options import kafka_client_options, to_kafka_python
from streaming.kafka.retry import until_answered
from streaming.spark.schemas import SOURCE_SCHEMA

T = TypeVar("T")

EARLIEST, LATEST = -2, -1

Offsets = dict[str, dict[str, int]]  # Spark's Kafka offset JSON: {topic: {"partition": offset}}


def split_limit(available: Mapping[int, int], max_rows: int) -> dict[int, int]:
    """How many records each partition may contribute under ``max_rows`` in total.

    Proportional to each partition's backlog, largest remainders first, ties by partition id: deterministic,
    never above a partition's backlog, and the sum is exactly ``min(max_rows, total backlog)``.
    """
    total = sum(available.values())
    if total <= max_rows:
        return dict(available)
    share = {p: n * max_rows // total for p, n in available.items()}
    left = max_rows - sum(share.values())
    order = sorted(available, key=lambda p: (-(available[p] * max_rows % total), p))
    for p in order[:left]:
        share[p] += 1
    return share


@dataclass(frozen=True)
class KafkaRange(InputPartition):
    """One Spark task: records ``[from_offset, until_offset)`` of one topic-partition."""

    topic: str
    partition: int
    from_offset: int
    until_offset: int


class KafkaDataSource(DataSource):
    """``spark.readStream.format("rebalance-kafka")``."""

    @classmethod
    def name(cls) -> str:
        return "rebalance-kafka"

    def schema(self) -> StructType:
        return SOURCE_SCHEMA

    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        return KafkaStreamReader(self.options, schema)


class DataLossError(RuntimeError):
    """Records Spark planned to read are gone (retention, deleted records, recreated topic)."""


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        options = CaseInsensitiveDict(options)  # Spark lower-cases option names
        self.topic = options.get("subscribe", "")
        if not self.topic or "," in self.topic:
            raise ValueError("rebalance-kafka: option 'subscribe' must name exactly one topic")
        self.client_options = kafka_client_options(options)
        to_kafka_python(self.client_options, "consumer")  # validate names early, on the driver
        self.starting = options.get("startingOffsets", "latest").strip()
        max_offsets = options.get("maxOffsetsPerTrigger")
        self.max_offsets = int(max_offsets) if max_offsets else None
        if self.max_offsets is not None and self.max_offsets < 1:
            raise ValueError("rebalance-kafka: maxOffsetsPerTrigger must be >= 1")
        self.fail_on_data_loss = options.get("failOnDataLoss", "true").lower() != "false"
        self.poll_timeout_ms = int(options.get("pollTimeoutMs", "120000"))
        self.batch_rows = max(1, int(options.get("maxRecordsPerBatch", "10000")))
        self.batch_bytes = max(1, int(options.get("maxBytesPerBatch", str(32 << 20))))
        max_event = options.get("maxEventBytes")
        self.max_event_bytes = int(max_event) if max_event else None
        self.schema = schema
        self._admin: Any = None
        self._target: Offsets | None = None  # Trigger.AvailableNow end, pinned at start
        self._latest: Offsets | None = None  # end offsets seen by the last latestOffset
        self._initial: Offsets | None = None

    # ---- driver side -------------------------------------------------------------------------------------
    def _admin_client(self) -> Any:
        if self._admin is None:
            from kafka import KafkaAdminClient

            self._admin = KafkaAdminClient(**to_kafka_python(self.client_options, "admin"))
        return self._admin

    def _ask(self, request: Callable[[Any], T]) -> T:
        """`request(admin)`, with a new admin client while the cluster does not answer, for up to
        `pollTimeoutMs` (`streaming.kafka.retry`: a restarted broker can leave the old client failing)."""
        return until_answered(lambda: request(self._admin_client()), timeout_s=self.poll_timeout_ms / 1000,
                              reset=self.stop, what=f"rebalance-kafka: topic {self.topic}")

    def _partitions(self) -> list[int]:
        (desc,) = self._ask(lambda admin: admin.describe_topics([self.topic]))
        if desc["error_code"] or not desc["partitions"]:
            raise RuntimeError(f"rebalance-kafka: topic {self.topic!r} not found (error {desc['error_code']})")
        return sorted(p["partition_index"] for p in desc["partitions"])

    def _list_offsets(self, partitions: list[int], spec: int) -> dict[int, int]:
        from kafka import TopicPartition
        from kafka.admin import OffsetSpec
        from kafka.protocol.consumer.offsets import IsolationLevel

        spec_ = OffsetSpec.LATEST if spec == LATEST else OffsetSpec.EARLIEST
        found = self._ask(lambda admin: admin.list_partition_offsets(
            {TopicPartition(self.topic, p): spec_ for p in partitions}, isolation_level=IsolationLevel.READ_COMMITTED))
        return {tp.partition: o.offset for tp, o in found.items()}

    def _end_offsets(self) -> dict[int, int]:
        return self._list_offsets(self._partitions(), LATEST)

    def initialOffset(self) -> Offsets:
        """Resolved once per reader: Spark asks again when planning the first batch, and "latest" must not
        move in between. (A restart that re-runs batch 0 resolves "latest" anew, like any restart before the
        first batch was logged; "earliest" and explicit offsets are stable.)"""
        if self._initial is None:
            self._initial = self._resolve_starting_offsets()
        return self._initial

    def _resolve_starting_offsets(self) -> Offsets:
        partitions = self._partitions()
        if self.starting in ("earliest", "latest"):
            spec = EARLIEST if self.starting == "earliest" else LATEST
            return {self.topic: {str(p): o for p, o in self._list_offsets(partitions, spec).items()}}
        try:
            wanted = json.loads(self.starting)[self.topic]
            wanted = {int(p): int(o) for p, o in wanted.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ValueError(f"rebalance-kafka: startingOffsets must be earliest, latest or JSON like "
                             f'{{"{self.topic}": {{"0": 23, "1": -2}}}}; got {self.starting!r}') from None
        missing = sorted(set(partitions) - set(wanted))
        if missing:
            raise ValueError(f"rebalance-kafka: startingOffsets has no offset for {self.topic} partitions "
                             f"{missing}; give every partition (-2 = earliest, -1 = latest)")
        resolved = {}
        for spec in (EARLIEST, LATEST):
            asked = [p for p, o in wanted.items() if o == spec]
            resolved.update(self._list_offsets(asked, spec) if asked else {})
        resolved.update({p: o for p, o in wanted.items() if o >= 0})
        if any(o < EARLIEST for o in resolved.values()):
            raise ValueError(f"rebalance-kafka: invalid offset in startingOffsets {self.starting!r}")
        return {self.topic: {str(p): o for p, o in sorted(resolved.items())}}

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = {self.topic: {str(p): o for p, o in self._end_offsets().items()}}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_offsets) if self.max_offsets else ReadAllAvailable()

    def latestOffset(self, start: Offsets, limit: ReadLimit) -> Offsets:
        begin = {int(p): o for p, o in start.get(self.topic, {}).items()}
        if self._target is not None:
            end = {int(p): o for p, o in self._target[self.topic].items()}
        else:
            end = self._end_offsets()
            self._latest = {self.topic: {str(p): o for p, o in end.items()}}
        for p, o in begin.items():
            end.setdefault(p, o)  # a partition missing from metadata keeps its position
        shrunk = {p: (begin[p], o) for p, o in end.items() if o < begin.get(p, 0)}
        if shrunk and self.fail_on_data_loss:
            where = ", ".join(f"{self.topic}-{p} (at offset {b}, log now ends at {e})" for p, (b, e) in shrunk.items())
            raise DataLossError(f"rebalance-kafka: data loss: {where}; was the topic recreated? "
                                "Set failOnDataLoss=false to read such partitions again from offset 0.")
        begin = {**begin, **{p: 0 for p in shrunk}}  # new partitions, and recreated ones, start at 0
        backlog = {p: end[p] - begin.get(p, 0) for p in end}
        if isinstance(limit, ReadMaxRows):
            take = split_limit(backlog, limit.max_rows)
            end = {p: begin.get(p, 0) + take[p] for p in end}
        elif isinstance(limit, ReadMinRows) and sum(backlog.values()) < limit.min_rows:
            end = {p: begin.get(p, 0) for p in end}
        return {self.topic: {str(p): o for p, o in sorted(end.items())}}

    def reportLatestOffset(self) -> Offsets | None:
        """The log end seen by the last `latestOffset` (before the read limit), for lag in query progress;
        remembered rather than fetched again to keep each trigger at one metadata + one ListOffsets call."""
        return self._latest or self._target

    def partitions(self, start: Offsets, end: Offsets) -> list[KafkaRange]:
        begin = start.get(self.topic, {})
        ranges = []
        for p, until in sorted(end.get(self.topic, {}).items(), key=lambda kv: int(kv[0])):
            frm = begin.get(p, 0)
            if until < frm:  # the log restarted below our position (recreated topic, failOnDataLoss=false)
                frm = 0
            if until > frm:
                ranges.append(KafkaRange(self.topic, int(p), frm, until))
        return ranges

    def commit(self, end: Offsets) -> None:
        """Nothing to do: progress lives in Spark's checkpoint, not in a consumer group."""

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    # ---- executor side -----------------------------------------------------------------------------------
    def read(self, partition: KafkaRange) -> Iterator[Any]:
        return read_range(partition, self.client_options, self.schema, fail_on_data_loss=self.fail_on_data_loss,
                          poll_timeout_ms=self.poll_timeout_ms, batch_rows=self.batch_rows,
                          batch_bytes=self.batch_bytes, max_event_bytes=self.max_event_bytes)


_consumers: dict[str, Any] = {}  # per Python worker: client settings JSON -> KafkaConsumer


def cached_consumer(client_options: Mapping[str, str]) -> Any:
    """A read_committed KafkaConsumer reused across tasks of this Python worker (connection + metadata warm)."""
    key = json.dumps(client_options, sort_keys=True)
    consumer = _consumers.get(key)
    if consumer is None:  # out of range raises: read_range decides (failOnDataLoss)
        consumer = _consumers[key] = committed_consumer(client_options, auto_offset_reset="none")
    return consumer


def drop_cached_consumer(client_options: Mapping[str, str]) -> None:
    """Close and forget this worker's consumer for these settings (its connections failed)."""
    consumer = _consumers.pop(json.dumps(client_options, sort_keys=True), None)
    if consumer is not None:
        consumer.close()


def _cut(value: bytes | None, headers: list[tuple[str, bytes]], max_event_bytes: int | None
         ) -> tuple[bytes | None, list[tuple[str, bytes]]]:
    """A value over `max_event_bytes` as its prefix, its true size in `SIZE_HEADER` (one already there, from
    `load`, stays: it has the line's size)."""
    if max_event_bytes is None or value is None or len(value) <= max_event_bytes:
        return value, headers
    if not any(k == SIZE_HEADER for k, _ in headers):
        headers = [*headers, (SIZE_HEADER, str(len(value)).encode())]
    return value[: min(max_event_bytes, PREFIX_BYTES)], headers


def read_range(part: KafkaRange, client_options: Mapping[str, str], schema: StructType, *,
               fail_on_data_loss: bool, poll_timeout_ms: int, batch_rows: int, batch_bytes: int = 32 << 20,
               max_event_bytes: int | None = None) -> Iterator[Any]:
    """Yield Arrow batches with the records of ``[from, until)``, each at most `batch_rows` records and about
    `batch_bytes` of values (a worker holds one batch, whatever the records' sizes); transaction markers and
    aborted records leave offset gaps, so the loop ends on the consumer position, not on a record count."""
    import pyarrow as pa
    from kafka import TopicPartition
    from kafka.errors import OffsetOutOfRangeError
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow_schema = to_arrow_schema(schema, timezone="UTC")
    tp = TopicPartition(part.topic, part.partition)

    def assigned() -> tuple[Any, int, int]:
        consumer = cached_consumer(client_options)
        consumer.assign([tp])
        return consumer, consumer.beginning_offsets([tp])[tp], consumer.end_offsets([tp])[tp]

    consumer, earliest, latest = until_answered(assigned, timeout_s=poll_timeout_ms / 1000,
                                                reset=lambda: drop_cached_consumer(client_options),
                                                what=f"rebalance-kafka: {part.topic}-{part.partition}")
    start, until = part.from_offset, part.until_offset
    if earliest > start:
        lost = (f"{part.topic}-{part.partition}: offsets {start}..{min(earliest, until) - 1} are no longer "
                f"available (earliest offset is {earliest}; deleted by retention or delete-records)")
        if fail_on_data_loss:
            raise DataLossError(f"rebalance-kafka: data loss in {lost}. Set failOnDataLoss=false to skip them.")
        start = earliest
    if start >= until:
        return
    if latest < until:
        lost = f"{part.topic}-{part.partition}: planned to read up to offset {until} but the log ends at {latest}"
        if fail_on_data_loss:
            raise DataLossError(f"rebalance-kafka: data loss in {lost} (topic recreated?). "
                                "Set failOnDataLoss=false to skip them.")
        until = latest
        if start >= until:
            return
    consumer.seek(tp, start)
    cols: tuple[list[Any], ...] = ([], [], [], [], [], [])
    held = 0  # value bytes in cols
    deadline = time.monotonic() + poll_timeout_ms / 1000
    while consumer.position(tp) < until:
        if time.monotonic() > deadline:
            raise TimeoutError(f"rebalance-kafka: {part.topic}-{part.partition} stuck at offset "
                               f"{consumer.position(tp)} < {until} after pollTimeoutMs={poll_timeout_ms}")
        try:
            fetched = consumer.poll(timeout_ms=500, max_records=batch_rows)
        except OffsetOutOfRangeError:  # deleted while we read
            position, earliest = consumer.position(tp), consumer.beginning_offsets([tp])[tp]
            if fail_on_data_loss:
                raise DataLossError(f"rebalance-kafka: data loss in {part.topic}-{part.partition}: offset "
                                    f"{position} was deleted while reading (earliest offset is now {earliest}). "
                                    "Set failOnDataLoss=false to skip such records.") from None
            consumer.seek(tp, min(max(earliest, position), until))
            continue
        for records in fetched.values():
            for r in records:
                if r.offset >= until:
                    break
                value, headers = _cut(r.value, list(r.headers or ()), max_event_bytes)
                cols[0].append(r.key)
                cols[1].append(value)
                cols[2].append(r.offset)
                cols[3].append(r.timestamp * 1000)
                cols[4].append(r.timestamp_type)
                cols[5].append([{"key": k, "value": v} for k, v in headers] if headers else None)
                held += len(value or b"")
                if len(cols[0]) >= batch_rows or held >= batch_bytes:
                    yield _batch(pa, arrow_schema, part, cols)
                    cols, held = ([], [], [], [], [], []), 0
    if cols[0]:
        yield _batch(pa, arrow_schema, part, cols)


def _batch(pa: Any, arrow_schema: Any, part: KafkaRange, cols: tuple[list[Any], ...]) -> Any:
    n = len(cols[0])
    arrays = [
        pa.array(cols[0], pa.binary()),
        pa.array(cols[1], pa.binary()),
        pa.array([part.topic] * n, pa.string()),
        pa.array([part.partition] * n, pa.int32()),
        pa.array(cols[2], pa.int64()),
        pa.array(cols[3], pa.int64()).cast(arrow_schema.field("timestamp").type),
        pa.array(cols[4], pa.int32()),
        pa.array(cols[5], arrow_schema.field("headers").type),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)

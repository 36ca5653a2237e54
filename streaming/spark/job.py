"""The main job: source rows -> group key -> per-group state machine -> (topic, key, value) rows for a sink.

Spark only moves data here: the parse stage computes each event's group (a pandas UDF over
`events.group_key`), `groupBy(group).applyInPandasWithState` hands each group's rows of a micro-batch
to `group_state.step` with the group's state blob, and the step's outputs are routed to the diffs or
dead-letter topic. Event order, validation and assignment are all inside `step` (pure, tested without
Spark); it also sorts the rows, which Spark does not deliver in order.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout

from streaming.core import events, group_state
from streaming.core.config import Limits, PipelineConfig
from streaming.core.lines import SIZE_HEADER, true_size
from streaming.core.records import KINDS, OutputRecord, SourceRecord
from streaming.spark.faults import pause_point
from streaming.spark.schemas import ORDER_COLUMNS, STATE_SCHEMA, STEP_SCHEMA
from streaming.spark.session import deferred_sigint

STATE_VERSION = 1
SOURCES = ("kafka", "files")  # how a row's (topic, partition, offset) reads as a source position

Step = Callable[[str, bytes | None, Sequence[SourceRecord], PipelineConfig, int],
                tuple[bytes | None, list[OutputRecord]]]
"""The state function's signature: `group_state.step`, or a stand-in that measures Spark alone (bench.pipeline)."""


def _null(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def _size(value: Any, claimed: Any) -> int | None:
    """The `SourceRecord.size` of a row: its `SIZE_HEADER` when the value is a prefix of a longer line."""
    return None if _null(value) or _null(claimed) else true_size(bytes(value), int(claimed))


def _group_keys(value: pd.Series, key: pd.Series, size: pd.Series, *, limits: Limits) -> pd.Series:
    return pd.Series([
        events.group_key(None if _null(v) else bytes(v), None if _null(k) else bytes(k), size=_size(v, n),
                         max_event_bytes=limits.max_event_bytes, max_name_chars=limits.max_name_chars)
        for v, k, n in zip(value, key, size, strict=True)
    ], dtype=object)


_FIELDS = ("value", "key", "topic", "partition", "offset", "ts_ms", "size")  # the row fields `_records` reads


def _records(pdf: pd.DataFrame, source: str) -> list[SourceRecord]:
    """One chunk of a group's rows as source records. The rows are read through one object array: a Series
    per column costs more than the rows of a typical group (an event or two per micro-batch)."""
    records = []
    rows = pdf.to_numpy(object)[:, [pdf.columns.get_loc(name) for name in _FIELDS]].tolist()
    for value, key, topic, partition, offset, ts, size in rows:
        partition, offset = int(partition), int(offset)
        position = (
            {"topic": topic, "partition": partition, "offset": offset}
            if source == "kafka"
            else {"file": topic, "line": offset}
        )
        records.append(SourceRecord(
            value=None if _null(value) else bytes(value),
            key=None if _null(key) else bytes(key),
            source=position,
            order=(partition, offset),
            timestamp_ms=None if _null(ts) else int(ts),
            size=_size(value, size),
        ))
    return records


def _frame(outputs: list[OutputRecord]) -> pd.DataFrame:
    """`STEP_SCHEMA` rows of `outputs`, from arrays of the final dtypes: pandas' type inference on lists was
    about a third of the cost of a group's frame of a few rows."""
    text = np.empty((len(outputs), 3), dtype=object)
    text[:] = [(o.kind, o.key, o.value) for o in outputs]
    order = np.array([o.order for o in outputs], dtype=np.int64)
    return pd.DataFrame({"kind": text[:, 0], "key": text[:, 1], "value": text[:, 2],
                         **{name: order[:, i] for i, name in enumerate(ORDER_COLUMNS)}})


def _apply_group(
    key: tuple[str], pdfs: Iterator[pd.DataFrame], state: GroupState, *, config: PipelineConfig, source: str,
    step: Step,
) -> Iterator[pd.DataFrame]:
    """One group's rows of one micro-batch through `step`; state written back or dropped."""
    (group,) = key
    records = [r for pdf in pdfs for r in _records(pdf, source)]  # no pd.concat: most groups come as one chunk
    blob = bytes(state.get[1]) if state.exists else None
    new_blob, outputs = step(group, blob, records, config, state.getCurrentProcessingTimeMs())
    ctx = TaskContext.get()
    pause_point("state", ctx.getLocalProperty("streaming.sql.batchId") if ctx else None)
    if new_blob is not None:  # always: in PySpark 4.3.0 a state left without update() was found dropped
        state.update((STATE_VERSION, new_blob))
    elif state.exists:
        state.remove()
    if outputs:
        yield _frame(outputs)


def build_pipeline(
    spark: SparkSession,
    source_df: DataFrame,
    config: PipelineConfig,
    topics: Mapping[str, str],
    *,
    source: str = "kafka",
    step: Step = group_state.step,
) -> DataFrame:
    """`source_df` in the Kafka source schema -> `topic string, key string, value binary` plus each record's
    source order (`ORDER_COLUMNS`: the files sink writes a batch in that order; the Kafka sink ignores it).

    `topics` maps each output kind (`KINDS`) to its topic; `source` says whether rows come
    from Kafka (positions `{"topic", "partition", "offset"}`) or from JSONL files (`{"file", "line"}`);
    `step` is the state function applied per group and micro-batch.
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    limits = config.limits

    @pandas_udf("string")
    def group_keys(value: pd.Series, key: pd.Series, size: pd.Series) -> pd.Series:
        return _group_keys(value, key, size, limits=limits)

    # the true size of a line cut to a prefix (`core.lines`), from its header; null when absent or not a number
    claimed = F.expr(f"try_cast(cast(try_element_at(filter(headers, h -> h.key = '{SIZE_HEADER}'), 1).value "
                     "as string) as bigint)").alias("size")
    parsed = source_df.select("key", "value", "topic", "partition", "offset",
                              F.unix_millis("timestamp").alias("ts_ms"), claimed)
    parsed = parsed.select(group_keys("value", "key", "size").alias("group"), *parsed.columns)
    stepped = parsed.groupBy("group").applyInPandasWithState(
        functools.partial(_apply_group, config=config, source=source, step=step),
        STEP_SCHEMA, STATE_SCHEMA, "Append", GroupStateTimeout.NoTimeout,
    )
    route = F.create_map(*(F.lit(x) for kind in KINDS for x in (kind, topics[kind])))
    return stepped.select(route[F.col("kind")].alias("topic"), "key", "value", *ORDER_COLUMNS)


def start_query(
    output: DataFrame,
    sink_format: str,
    sink_options: Mapping[str, str],
    checkpoint: str,
    *,
    once: bool,
    name: str | None = None,
) -> StreamingQuery:
    """Start the sink: availableNow (catch up, then stop) for `--once`/replay, else back-to-back batches."""
    writer = (
        output.writeStream.format(sink_format)
        .options(**sink_options)
        .option("checkpointLocation", checkpoint)
        .outputMode("append")
    )
    if name:
        writer = writer.queryName(name)
    writer = writer.trigger(availableNow=True) if once else writer.trigger(processingTime="0 seconds")
    return writer.start()


def _offset_total(offset: Any) -> int | None:
    """Sum of the numbers in a source offset (per-file lines, per-partition offsets): lag arithmetic."""
    if isinstance(offset, str):
        try:
            offset = json.loads(offset)
        except ValueError:
            return None
    if isinstance(offset, bool):
        return None
    if isinstance(offset, int):
        return offset
    if isinstance(offset, dict):
        parts = [_offset_total(v) for v in offset.values()]
        return None if any(p is None for p in parts) else sum(parts)
    return None


def progress_line(progress: Mapping[str, Any], label: str, log_end: Callable[[], Any] | None = None) -> str:
    """One line per micro-batch; lag = records of the input past the batch's end offset.

    Spark reports the input's end (`latestOffset`) only for batches it planned in this run: the first batch
    after a restart re-runs the one the offset log holds and has none (Spark's MicroBatchExecution skips
    planning for it). `log_end` then supplies the end as it is now (the service reads the topic's end
    offsets); without it the line says why the lag is not known."""
    rows = progress.get("numInputRows", 0)
    rate = progress.get("processedRowsPerSecond") or 0.0
    lags = []
    for s in progress.get("sources", []):
        latest = _offset_total(s.get("latestOffset"))  # PySpark gives the JSON text "null" when there is none
        if latest is None and log_end is not None:
            latest = _offset_total(log_end())
        end = _offset_total(s.get("endOffset"))
        if latest is not None and end is not None:
            lags.append(max(0, latest - end))
    lag = str(sum(lags)) if lags else "unknown (a batch planned before the restart: the log end was not read)"
    ms = progress.get("durationMs", {}).get("triggerExecution", 0)
    return f"[{label}] batch {progress.get('batchId')}: {rows} events in {ms} ms ({rate:,.0f} events/s), lag {lag}"


def await_query(query: StreamingQuery, label: str, *, poll_s: float = 1.0, heartbeat_s: float = 15.0,
                out=sys.stderr, probe: Callable[[], str | None] | None = None,
                log_end: Callable[[], Any] | None = None) -> int:
    """Wait for the query, printing one line per micro-batch that read events (and a heartbeat while a
    long batch runs); re-raise its failure. Returns the number of events read.

    Every batch is counted once: a progress report is new when its trigger `timestamp` is, because after an
    idle spell Spark reports the batch id to come with no rows and then the real batch under the same id.
    Ctrl-C stops the query cleanly and raises `KeyboardInterrupt` for the command to report: the signal only
    sets a flag checked between polls, so no Py4J call is interrupted half way (PySpark's own handler makes a
    Py4J call from inside the signal handler, which fails with "reentrant call" tracebacks).
    `probe` (the service passes a broker check) runs at each heartbeat without a batch; what it returns is
    printed as a warning until it returns None again. `log_end`: see `progress_line`.
    """
    seen, events = "", 0
    since = beat = time.monotonic()
    down_since: float | None = None
    with deferred_sigint(second_interrupts=True) as interrupted:
        while True:
            done = query.awaitTermination(poll_s)
            for p in query.recentProgress:
                if p["timestamp"] > seen:  # ISO-8601 UTC timestamps of one query run order as strings
                    seen = p["timestamp"]
                    rows = p.get("numInputRows") or 0
                    events += rows
                    if rows:
                        since = beat = time.monotonic()
                        if out is not None:
                            print(progress_line(p, label, log_end), file=out, flush=True)
            if done:
                return events
            if interrupted():
                _stop_quietly(query)
                raise KeyboardInterrupt
            if out is not None and time.monotonic() - beat >= heartbeat_s:
                beat = time.monotonic()
                status = query.status
                if status.get("isTriggerActive"):
                    print(f"[{label}] micro-batch running for {beat - since:.0f} s ({status.get('message', '')})",
                          file=out, flush=True)
                problem = probe() if probe is not None else None
                if problem is not None:
                    down_since = beat if down_since is None else down_since
                    print(f"[{label}] WARNING: {problem} for {time.monotonic() - down_since:.0f} s; batches wait and "
                          "resume when it is back", file=out, flush=True)
                elif down_since is not None:
                    print(f"[{label}] back after {time.monotonic() - down_since:.0f} s", file=out, flush=True)
                    down_since = None


def _stop_quietly(query: StreamingQuery) -> None:
    """Stop on Ctrl-C with Spark's console log off: the tasks a stop cancels report their own cancellation
    as errors with Java traces (a task abort, "Error in TaskCompletionListener" over a broadcast block already
    removed), after the one line the command prints. The command exits right after, so the level stays off."""
    session = SparkSession.getActiveSession()
    if session is not None:
        session.sparkContext.setLogLevel("OFF")
    query.stop()


def wait_started(query: StreamingQuery, timeout_s: float = 120.0) -> None:
    """Block until the first micro-batch has been planned (used by latency benchmarks and tests)."""
    deadline = time.monotonic() + timeout_s
    while query.isActive and not query.recentProgress and time.monotonic() < deadline:
        time.sleep(0.2)

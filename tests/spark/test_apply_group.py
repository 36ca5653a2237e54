"""`job._apply_group` without Spark: the rows PySpark hands over (Arrow-converted chunks, nulls as None/NaN)
become exactly these source records, and the step's outputs exactly this `STEP_SCHEMA` frame."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from streaming.core.config import Limits, PipelineConfig
from streaming.core.records import OutputRecord, SourceRecord
from streaming.spark.job import _apply_group


class FakeState:
    """The part of PySpark's `GroupState` the adapter uses."""

    def __init__(self, blob: bytes | None) -> None:
        self.exists, self.get, self.calls = blob is not None, (1, blob), []

    def update(self, value: tuple[int, bytes]) -> None:
        self.calls.append(("update", value))

    def remove(self) -> None:
        self.calls.append(("remove",))

    def getCurrentProcessingTimeMs(self) -> int:
        return 42


def chunk(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    """Rows (key, value, topic, partition, offset, ts_ms, size) as PySpark converts them: via Arrow, so a
    null long in a column with nulls is NaN, and the grouping column comes first."""
    key, value, topic, partition, offset, ts, size = zip(*rows, strict=True)
    return pa.record_batch({
        "group": pa.array(["g"] * len(rows)), "key": pa.array(key, pa.binary()), "value": pa.array(value, pa.binary()),
        "topic": pa.array(topic), "partition": pa.array(partition, pa.int32()), "offset": pa.array(offset, pa.int64()),
        "ts_ms": pa.array(ts, pa.int64()), "size": pa.array(size, pa.int64()),
    }).to_pandas()


def test_rows_to_records_and_outputs_to_a_frame() -> None:
    seen: list[Sequence[SourceRecord]] = []

    def step(group: str, blob: bytes | None, records: Sequence[SourceRecord], config: PipelineConfig,
             now_ms: int) -> tuple[bytes | None, list[OutputRecord]]:
        assert (group, blob, now_ms) == ("g", b"old", 42)
        seen.append(records)
        return b"new", [OutputRecord("diff", "g", b"{}", (*r.order, 0)) for r in records] + [
            OutputRecord("dead_letter", "g", b"x", (*records[0].order, 1))]

    state = FakeState(b"old")
    chunks = [chunk([(b"g", b"abc", "events", 1, 7, 1_700_000_000_000, None),
                     (None, None, "events", 0, 9, None, 5)]),
              chunk([(b"g", b"abcdef", "events", 2, 3, 5, 100)])]
    frames = list(_apply_group(("g",), iter(chunks), state, config=PipelineConfig(("sticky",), Limits()),
                               source="kafka", step=step))
    assert seen == [[
        SourceRecord(b"abc", b"g", {"topic": "events", "partition": 1, "offset": 7}, (1, 7), 1_700_000_000_000),
        SourceRecord(None, None, {"topic": "events", "partition": 0, "offset": 9}, (0, 9), None),
        SourceRecord(b"abcdef", b"g", {"topic": "events", "partition": 2, "offset": 3}, (2, 3), 5, 100),
    ]]
    assert all(type(r.timestamp_ms) in (int, type(None)) and type(r.order[1]) is int for r in seen[0])
    assert state.calls == [("update", (1, b"new"))]
    (frame,) = frames
    assert frame.dtypes.tolist() == [np.dtype(object)] * 3 + [np.dtype(np.int64)] * 3
    assert frame.to_dict("list") == {
        "kind": ["diff", "diff", "diff", "dead_letter"], "key": ["g"] * 4, "value": [b"{}", b"{}", b"{}", b"x"],
        "src": [1, 0, 2, 1], "pos": [7, 9, 3, 7], "seq": [0, 0, 0, 1]}


def test_files_source_positions_and_a_dropped_state() -> None:
    seen: list[Sequence[SourceRecord]] = []

    def step(group: str, blob: bytes | None, records: Sequence[SourceRecord], config: PipelineConfig,
             now_ms: int) -> tuple[bytes | None, list[OutputRecord]]:
        seen.append(records)
        return None, []

    state = FakeState(b"old")
    frames = list(_apply_group(("g",), iter([chunk([(None, b"{}", "log.jsonl", 0, 12, None, None)])]), state,
                               config=PipelineConfig(("sticky",), Limits()), source="files", step=step))
    assert frames == []
    assert seen == [[SourceRecord(b"{}", None, {"file": "log.jsonl", "line": 12}, (0, 12), None)]]
    assert state.calls == [("remove",)]

"""Streaming source "rebalance-jsonl": captured JSONL logs read as if they were a Kafka topic.

It produces the Kafka source's schema so one pipeline serves both `replay` and `serve`: key null,
value = the line's bytes, topic = file name, partition = file index (sorted order), offset = line number
(1-based, so a position is exactly the `{"file", "line"}` the state machine reports), timestamp null,
timestampType -1. A line longer than `maxEventBytes` (default: the configured event limit) is not read
whole: its value is its first `maxEventBytes + 1` bytes, which the state machine dead-letters as
oversized (exactly as `local.read_jsonl`). Offsets are per-file line counts; `maxOffsetsPerTrigger`
caps the lines of one micro-batch (admission control), and Trigger.AvailableNow pins the end at the lines
present when the query starts. Blank lines keep their number but produce no row. A line ends at "\\n";
a last line without one is taken only by Trigger.AvailableNow (the log is complete), while a continuous
query waits for its newline, so a line being appended is never read half-written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from streaming.core.config import Limits
from streaming.core.local import log_files
from streaming.spark.schemas import SOURCE_SCHEMA

_INDEX_STRIDE = 1024  # remember the byte position of every 1024th line: bounded memory, short skips
_LINES_PER_TASK = 50_000  # split big ranges so both cores parse
_SCAN_CHUNK = 1 << 20


@dataclass
class _LineIndex:
    """Line count of one file, scanned incrementally, with the byte position of every stride-th line."""

    path: Path
    lines: int = 0  # "\n"-terminated lines counted so far
    scanned: int = 0  # bytes up to the end of the last "\n"-terminated line
    starts: list[int] = field(default_factory=lambda: [0])  # starts[k] = byte where line k*stride+1 starts

    def refresh(self, *, with_tail: bool) -> int:
        """Lines now in the file; `with_tail` also counts a last line that has no "\n" (yet)."""
        size = self.path.stat().st_size
        with self.path.open("rb") as f:
            f.seek(self.scanned)
            pos = self.scanned
            while pos < size:
                chunk = f.read(min(_SCAN_CHUNK, size - pos))
                if not chunk:
                    break
                start = 0
                while (nl := chunk.find(b"\n", start)) >= 0:
                    self.lines += 1
                    if self.lines % _INDEX_STRIDE == 0:
                        self.starts.append(pos + nl + 1)
                    start = nl + 1
                pos += len(chunk)
                self.scanned = pos - (len(chunk) - start)
        return self.lines + (1 if with_tail and size > self.scanned else 0)

    def seek_hint(self, line: int) -> tuple[int, int]:
        """(byte, lines to skip) to reach the start of 1-based `line`."""
        k = min((line - 1) // _INDEX_STRIDE, len(self.starts) - 1)
        return self.starts[k], line - 1 - k * _INDEX_STRIDE


@dataclass(frozen=True)
class LineRange(InputPartition):
    """Lines first..last (1-based, inclusive) of one file; `byte`/`skip` locate the first quickly."""

    path: str
    file_index: int
    first: int
    last: int
    byte: int
    skip: int
    max_bytes: int


class JsonlStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, path: str, max_per_trigger: int | None, max_event_bytes: int) -> None:
        self.path = path
        self.max_per_trigger = max_per_trigger
        self.max_event_bytes = max_event_bytes
        self.indexes: dict[str, _LineIndex] = {}
        self.pinned: dict[str, int] | None = None

    def _available(self, *, with_tail: bool = False) -> dict[str, int]:
        files = log_files(self.path)
        if not files or not all(f.is_file() for f in files):
            raise FileNotFoundError(f"no JSONL log at {self.path}")
        for f in files:
            self.indexes.setdefault(f.name, _LineIndex(f))
        return {f.name: self.indexes[f.name].refresh(with_tail=with_tail) for f in files}

    def initialOffset(self) -> dict:
        return {}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_per_trigger) if self.max_per_trigger else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self.pinned = self._available(with_tail=True)

    def reportLatestOffset(self) -> dict:
        return self.pinned if self.pinned is not None else self._available()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        available = self.pinned if self.pinned is not None else self._available()
        budget = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        end = dict(start)
        for name, count in available.items():  # files in name order: earlier files are read first
            done = start.get(name, 0)
            take = count - done if budget is None else min(count - done, budget)
            if take > 0:
                end[name] = done + take
                if budget is not None:
                    budget -= take
                    if budget == 0:
                        break
        return end

    def partitions(self, start: dict, end: dict) -> list[LineRange]:
        if not self.indexes:
            self._available()
        names = sorted(self.indexes)
        ranges = []
        for name, last in sorted(end.items()):
            first = start.get(name, 0) + 1
            index = self.indexes[name]
            for lo in range(first, last + 1, _LINES_PER_TASK):
                hi = min(last, lo + _LINES_PER_TASK - 1)
                byte, skip = index.seek_hint(lo)
                ranges.append(LineRange(str(index.path), names.index(name), lo, hi, byte, skip, self.max_event_bytes))
        return ranges

    def read(self, partition: LineRange) -> Iterator[tuple]:
        p = partition
        name = os.path.basename(p.path)
        cap = p.max_bytes + 2
        with open(p.path, "rb") as f:
            f.seek(p.byte)
            for _ in range(p.skip):
                _read_line(f, cap)
            for line_no in range(p.first, p.last + 1):
                value = _read_line(f, cap).rstrip(b"\r\n")
                if value.strip():
                    yield (None, value, name, p.file_index, line_no, None, -1)


def _read_line(f, cap: int) -> bytes:
    """The next line, or its first `cap - 1` bytes when longer (the rest is skipped, never held)."""
    line = f.readline(cap)
    if not line.endswith(b"\n") and len(line) == cap:
        line = line[: cap - 1]
        while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):
            pass
    return line


class JsonlDataSource(DataSource):
    """`spark.readStream.format("rebalance-jsonl").option("path", LOG).option("maxOffsetsPerTrigger", N)`."""

    @classmethod
    def name(cls) -> str:
        return "rebalance-jsonl"

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema) -> JsonlStreamReader:
        path = self.options.get("path")
        if not path:
            raise ValueError("rebalance-jsonl: option 'path' is required")
        limit = self.options.get("maxOffsetsPerTrigger")
        max_rows = int(limit) if limit else None
        if max_rows is not None and max_rows < 1:
            raise ValueError(f"rebalance-jsonl: maxOffsetsPerTrigger must be >= 1, got {limit}")
        max_event_bytes = int(self.options.get("maxEventBytes", Limits().max_event_bytes))
        return JsonlStreamReader(path, max_rows, max_event_bytes)

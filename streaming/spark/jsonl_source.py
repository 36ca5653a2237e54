"""Streaming source "rebalance-jsonl": captured JSONL logs read as if they were a Kafka topic.

It produces the Kafka source's schema so one pipeline serves both `replay` and `serve`, and each row is
what `rebalance load` would have produced from the line: key null, value = the line's bytes, topic = file
name, partition = file index (sorted order), offset = line number (1-based, so a position is exactly the
`{"file", "line"}` the state machine reports), timestamp null, timestampType -1, headers = `SIZE_HEADER`
for a line cut to a prefix. Lines are read by `core.lines.read_lines` (over-long lines, BOM, blank lines:
its rules), with `maxEventBytes` (default: the configured event limit). Offsets are per-file line counts;
`maxOffsetsPerTrigger` caps the lines of one micro-batch (admission control), and Trigger.AvailableNow
pins the end at the lines present when the query starts. A last line without "\\n" is read only by
Trigger.AvailableNow with `completeLog=true` (a run that will not resume takes the log as complete);
otherwise it is left until its newline is written, so a line being appended is never read half-written,
and a resumed run reads it whole.
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
from streaming.core.lines import SIZE_HEADER, read_lines
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
    def __init__(self, path: str, max_per_trigger: int | None, max_event_bytes: int, complete: bool = False) -> None:
        self.path = path
        self.max_per_trigger = max_per_trigger
        self.max_event_bytes = max_event_bytes
        self.indexes: dict[str, _LineIndex] = {}
        self.pinned: dict[str, int] | None = None
        self.complete = complete

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
        self.pinned = self._available(with_tail=self.complete)

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
        with open(p.path, "rb") as f:
            f.seek(p.byte)
            for line in read_lines(f, p.max_bytes, complete=True, number=p.first - p.skip, first=p.first,
                                   last=p.last):
                headers = [(SIZE_HEADER, str(line.size).encode())] if line.cut else None
                yield (None, line.value, name, p.file_index, line.number, None, -1, headers)


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
        complete = self.options.get("completeLog", "false").lower() == "true"
        return JsonlStreamReader(path, max_rows, max_event_bytes, complete)

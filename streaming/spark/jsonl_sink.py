"""Streaming sink "rebalance-files": one JSONL file per topic per micro-batch, exactly once, in source order.

Input columns `topic string, key string, value binary` and the job's order columns (`src`, `pos`, `seq`);
each value becomes one line of `<path>/<topic>/batch-<batchId:08d>.jsonl`. Tasks write hidden part files
and report each line's order and byte range; the driver's commit copies the lines of all parts in source
order (as `rebalance replay --engine local` writes them: Spark's tasks hold groups in hash order) into the
batch file through a temp file and an atomic rename. Spark re-runs an uncommitted batch with the same id,
offsets and state, so the re-run renames an identical file over the old one: readers never see a partial
batch or a duplicate. Readers take `*.jsonl`; part and temp files are hidden.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pyspark import TaskContext
from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage

from streaming.core.records import batch_file_name
from streaming.spark.faults import pause_point
from streaming.spark.schemas import SINK_SCHEMA


def batch_file(root: str | os.PathLike[str], topic: str, batch_id: int) -> Path:
    return Path(root) / topic / batch_file_name(batch_id)


@dataclass
class PartFiles(WriterCommitMessage):
    """What one task wrote: {topic: part file}, and per topic each line's (order, start byte, length)."""

    partition: int
    parts: dict[str, str]
    lines: dict[str, list[tuple[tuple[int, int, int], int, int]]]


class FilesStreamWriter(DataSourceStreamWriter):
    def __init__(self, path: str) -> None:
        self.path = path

    def write(self, iterator: Iterator) -> PartFiles:
        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx else 0
        batch = ctx.getLocalProperty("streaming.sql.batchId") if ctx else "x"
        stem = f".part-{batch}-{partition:05d}-{uuid.uuid4().hex}.tmp"
        handles: dict[str, object] = {}
        parts: dict[str, str] = {}
        lines: dict[str, list[tuple[tuple[int, int, int], int, int]]] = {}
        try:
            for row in iterator:
                topic = row.topic
                if topic not in handles:
                    target = Path(self.path) / topic
                    target.mkdir(parents=True, exist_ok=True)
                    parts[topic] = str(target / stem)
                    handles[topic] = open(parts[topic], "wb")  # noqa: SIM115 - closed in finally
                    lines[topic] = []
                out = handles[topic]
                value = bytes(row.value) + b"\n"
                lines[topic].append(((row.src, row.pos, row.seq), out.tell(), len(value)))
                out.write(value)
            pause_point("files-written", batch)  # crash and interrupt tests only
        finally:
            for h in handles.values():
                h.close()
        return PartFiles(partition, parts, lines)

    def commit(self, messages: list[PartFiles | None], batchId: int) -> None:
        by_topic: dict[str, list[tuple[tuple[int, int, int], str, int, int]]] = {}
        for m in messages:
            if m is not None:
                for topic, part in m.parts.items():
                    by_topic.setdefault(topic, []).extend((order, part, start, n) for order, start, n in m.lines[topic])
        for topic, lines in sorted(by_topic.items()):
            lines.sort()
            parts = sorted({part for _, part, _, _ in lines})
            final = batch_file(self.path, topic, batchId)
            tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")
            sources = {part: open(part, "rb") for part in parts}  # noqa: SIM115 - closed below
            try:
                with tmp.open("wb") as out:
                    for _, part, start, n in lines:
                        src = sources[part]
                        src.seek(start)
                        out.write(src.read(n))
                    out.flush()
                    os.fsync(out.fileno())
            finally:
                for src in sources.values():
                    src.close()
            os.replace(tmp, final)
            for part in parts:
                os.unlink(part)
            for stale in final.parent.glob(f".part-{batchId}-*.tmp"):  # left by attempts that crashed
                stale.unlink(missing_ok=True)

    def abort(self, messages: list[PartFiles | None], batchId: int) -> None:
        for m in messages:
            if m is not None:
                for part in m.parts.values():
                    Path(part).unlink(missing_ok=True)


class FilesDataSource(DataSource):
    """`df.writeStream.format("rebalance-files").option("path", OUT_DIR)`."""

    @classmethod
    def name(cls) -> str:
        return "rebalance-files"

    def schema(self) -> str:
        return SINK_SCHEMA

    def streamWriter(self, schema, overwrite: bool) -> FilesStreamWriter:
        path = self.options.get("path")
        if not path:
            raise ValueError("rebalance-files: option 'path' is required")
        return FilesStreamWriter(path)


def read_records(directory: str | os.PathLike[str]) -> list[bytes]:
    """Every line of a topic directory's batch files, in batch order (how `replay` output is read back)."""
    lines: list[bytes] = []
    for f in sorted(Path(directory).glob("*.jsonl")):
        with f.open("rb") as src:
            lines.extend(line.rstrip(b"\n") for line in src if line.strip())
    return lines

"""Streaming sink "rebalance-files": one JSONL file per topic per micro-batch, exactly once.

Input columns `topic string, key string, value binary`; each value becomes one line of
`<path>/<topic>/batch-<batchId:08d>.jsonl`. Tasks write hidden part files; the driver's commit joins them
in task order into the batch file through a temp file and an atomic rename. Spark re-runs an uncommitted
batch with the same id, offsets and state, so the re-run renames an identical file over the old one:
readers never see a partial batch or a duplicate. Readers take `*.jsonl`; part and temp files are hidden.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pyspark import TaskContext
from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage

from streaming.spark.schemas import SINK_SCHEMA


def batch_file(root: str | os.PathLike[str], topic: str, batch_id: int) -> Path:
    return Path(root) / topic / f"batch-{batch_id:08d}.jsonl"


@dataclass
class PartFiles(WriterCommitMessage):
    """What one task wrote: {topic: part file}, and the task's partition id (the join order)."""

    partition: int
    parts: dict[str, str]


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
        try:
            for row in iterator:
                topic = row.topic
                if topic not in handles:
                    target = Path(self.path) / topic
                    target.mkdir(parents=True, exist_ok=True)
                    parts[topic] = str(target / stem)
                    handles[topic] = open(parts[topic], "wb")  # noqa: SIM115 - closed in finally
                out = handles[topic]
                out.write(bytes(row.value))
                out.write(b"\n")
        finally:
            for h in handles.values():
                h.close()
        return PartFiles(partition, parts)

    def commit(self, messages: list[PartFiles | None], batchId: int) -> None:
        by_topic: dict[str, list[tuple[int, str]]] = {}
        for m in messages:
            if m is not None:
                for topic, part in m.parts.items():
                    by_topic.setdefault(topic, []).append((m.partition, part))
        for topic, parts in sorted(by_topic.items()):
            final = batch_file(self.path, topic, batchId)
            tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")
            with tmp.open("wb") as out:
                for _, part in sorted(parts):
                    with open(part, "rb") as src:
                        shutil.copyfileobj(src, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, final)
            for _, part in parts:
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

"""The one JSONL line reader: `load`, `replay`'s Spark source and the plain loop all read logs through it,
so one file gives every command the same lines, with the same numbers, values and sizes.

Rules (documented for users in docs/events-and-diffs.md §1):

* A line ends at "\\n" (a "\\r" before it is dropped). Line numbers are 1-based and count every line; a
  line of only whitespace produces no record.
* A UTF-8 byte order mark at the start of a file is dropped (some editors write one).
* A line longer than `max_bytes` is one record, never held whole and never split: its value is its first
  `min(max_bytes, PREFIX_BYTES)` bytes and its `size` is the line's true length. The size travels with the
  value (`SIZE_HEADER` on a Kafka record, `SourceRecord.size` in the pipeline), so the event is
  dead-lettered as oversized with its true size. The prefix stays below Kafka's default 1 MB message
  limit, so `load` can produce it to any broker.
* A last line without "\\n" is read only when the input is `complete` (a run that will not resume:
  `load`, `replay` without a checkpoint). Otherwise it is left unread, so a log still being appended is
  never read half-written, and the next run reads the completed line whole.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

BOM = b"\xef\xbb\xbf"
SIZE_HEADER = "rebalance.original-bytes"  # Kafka record header: true size of a value cut to a prefix
PREFIX_BYTES = 64 * 1024  # what is kept of an over-long line
_SKIP_CHUNK = 1 << 20


@dataclass(frozen=True)
class Line:
    number: int  # 1-based, blank lines counted
    value: bytes  # without the line ending; a prefix of the line when `size > len(value)`
    size: int  # the line's length without its ending

    @property
    def cut(self) -> bool:
        return self.size > len(self.value)


def read_lines(f: BinaryIO, max_bytes: int, *, complete: bool, number: int = 1, first: int = 1,
               last: int | None = None) -> Iterator[Line]:
    """The non-blank lines `first..last` of `f`, read from its current position, the start of line `number`.

    Memory is bounded by `max_bytes` whatever the line lengths. A BOM is dropped when reading starts at
    byte 0."""
    bom = f.tell() == 0
    cap = max_bytes + 2  # a line of max_bytes plus "\r\n" is read in one go
    while last is None or number <= last:
        head = f.readline(cap)
        if not head:
            return
        more = len(head) == cap and not head.endswith(b"\n")
        if bom:
            bom = False
            if head.startswith(BOM):
                head = head[len(BOM):]
        size, ended, tail = len(head), head.endswith(b"\n"), head[-2:]
        while more and (chunk := f.readline(_SKIP_CHUNK)):  # the rest of an over-long line: counted, not held
            size += len(chunk)
            tail = (tail + chunk)[-2:]
            ended = chunk.endswith(b"\n")
            more = not ended
        if not ended and not complete:
            return  # a line still being written: left for a later run
        size -= ended + (tail[-1 - ended:len(tail) - ended] == b"\r")
        line, number = number, number + 1
        if line < first:
            continue
        if size > max_bytes:
            yield Line(line, head[:min(max_bytes, PREFIX_BYTES)], size)
        elif head[:size].strip():
            yield Line(line, head[:size], size)


def true_size(value: bytes | None, claimed: int | None) -> int | None:
    """The size of a record's original line: `claimed` (from `SIZE_HEADER`) when it is larger than the value,
    which is then a prefix; None otherwise (the value is the whole line)."""
    if value is None or claimed is None or claimed <= len(value):
        return None
    return claimed


def unterminated(path: str | os.PathLike[str]) -> bool:
    """Whether the file's last line has no newline (yet)."""
    with open(path, "rb") as f:
        if f.seek(0, os.SEEK_END) == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"

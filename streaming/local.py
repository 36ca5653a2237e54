"""The pipeline without Spark: JSONL logs -> `group_state.step` -> output records, in one Python loop.

It is the floor the Spark job is benchmarked against, the fast path for reports and tests, and the
reference for the batching invariance the Spark job must keep: micro-batches here are cut exactly like
Spark's (consecutive records, grouped by `group_key`), so any `max_events_per_batch` gives the same
records (except `emitted_ts`) in the same order.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from itertools import islice

from streaming.config import Limits, PipelineConfig
from streaming.events import group_key
from streaming.group_state import OutputRecord, SourceRecord, step

_DEFAULT_LIMITS = Limits()


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def read_jsonl(path: str | os.PathLike[str], file_index: int = 0, *,
               max_event_bytes: int = _DEFAULT_LIMITS.max_event_bytes) -> Iterator[SourceRecord]:
    """One record per non-blank line: source {"file": basename, "line": n (1-based)}, order (file_index, n).

    A line longer than `max_event_bytes` is not read into memory whole: its value is its first
    `max_event_bytes + 1` bytes, which `step` dead-letters as oversized.
    """
    name = os.path.basename(os.fspath(path))
    with open(path, "rb") as f:
        line_no = 0
        while True:
            line = f.readline(max_event_bytes + 2)
            if not line:
                return
            line_no += 1
            if not line.endswith(b"\n") and len(line) == max_event_bytes + 2:
                line = line[: max_event_bytes + 1]
                while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
            value = line.rstrip(b"\r\n")
            if not value.strip():
                continue
            yield SourceRecord(value, None, {"file": name, "line": line_no}, (file_index, line_no), None)


def replay(
    records: Iterable[SourceRecord],
    config: PipelineConfig,
    now_ms: Callable[[], int] = wall_clock_ms,
    *,
    max_events_per_batch: int | None = 1_000,
    states: dict[str, bytes] | None = None,
) -> Iterator[OutputRecord]:
    """Output records of `records`, in source order, with one state blob per group.

    Records are taken in micro-batches of `max_events_per_batch` (None: all at once); per batch, each
    group's records go to one `step` call, as Spark would do. `states` (group -> blob) may be passed in
    to resume or to inspect the final states.
    """
    if max_events_per_batch is not None and max_events_per_batch < 1:
        raise ValueError(f"max_events_per_batch: expected a positive integer, got {max_events_per_batch}")
    states = {} if states is None else states
    limits = config.limits
    it = iter(records)
    while batch := list(islice(it, max_events_per_batch)) if max_events_per_batch else list(it):
        by_group: dict[str, list[SourceRecord]] = {}
        for rec in batch:
            key = group_key(rec.value, rec.key, max_event_bytes=limits.max_event_bytes,
                            max_name_chars=limits.max_name_chars)
            by_group.setdefault(key, []).append(rec)
        now = now_ms()
        out: list[OutputRecord] = []
        for group, recs in by_group.items():
            blob, emitted = step(group, states.get(group), recs, config, now)
            if blob is None:
                states.pop(group, None)
            else:
                states[group] = blob
            out.extend(emitted)
        out.sort(key=lambda r: r.order)
        yield from out
        if not max_events_per_batch:
            return

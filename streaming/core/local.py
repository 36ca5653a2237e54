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

from streaming.core.config import Limits, PipelineConfig
from streaming.core.events import group_key
from streaming.core.group_state import step_state
from streaming.core.lines import read_lines
from streaming.core.records import OutputRecord, SourceRecord
from streaming.core.state_codec import GroupState, decode, encode

_DEFAULT_LIMITS = Limits()


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def read_jsonl(path: str | os.PathLike[str], file_index: int = 0, *,
               max_event_bytes: int = _DEFAULT_LIMITS.max_event_bytes, complete: bool = True
               ) -> Iterator[SourceRecord]:
    """One record per non-blank line (`core.lines` rules): source {"file": basename, "line": n (1-based)},
    order (file_index, n); an over-long line is a prefix with its true `size`, which `step` dead-letters."""
    name = os.path.basename(os.fspath(path))
    with open(path, "rb") as f:
        for line in read_lines(f, max_event_bytes, complete=complete):
            yield SourceRecord(line.value, None, {"file": name, "line": line.number}, (file_index, line.number),
                               None, line.size if line.cut else None)


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
    to resume or to inspect the final states; it is brought up to date when the replay ends (exhausted
    or closed). In between, states stay decoded in memory: with many groups a batch holds about one event
    per group, and a blob round trip per batch would cost as much as the event itself.
    """
    if max_events_per_batch is not None and max_events_per_batch < 1:
        raise ValueError(f"max_events_per_batch: expected a positive integer, got {max_events_per_batch}")
    states = {} if states is None else states
    live: dict[str, GroupState] = {}  # decoded states of the groups met so far
    stale: set[str] = set()  # groups whose blob in `states` is behind `live`
    limits = config.limits
    it = iter(records)
    try:
        while batch := list(islice(it, max_events_per_batch)) if max_events_per_batch else list(it):
            by_group: dict[str, list[SourceRecord]] = {}
            for rec in batch:
                key = group_key(rec.value, rec.key, size=rec.size, max_event_bytes=limits.max_event_bytes,
                                max_name_chars=limits.max_name_chars)
                by_group.setdefault(key, []).append(rec)
            now = now_ms()
            out: list[OutputRecord] = []
            for group, recs in by_group.items():
                current = live.get(group)
                if current is None and group in states:
                    current = decode(states[group])
                current, dirty, emitted = step_state(group, current, recs, config, now)
                if current is None:
                    live.pop(group, None)
                    states.pop(group, None)
                    stale.discard(group)
                else:
                    live[group] = current
                    if dirty:
                        stale.add(group)
                out.extend(emitted)
            out.sort(key=lambda r: r.order)
            yield from out
            if not max_events_per_batch:
                return
    finally:
        for group in stale:
            states[group] = encode(live[group])

"""The pipeline without Spark: JSONL logs -> `group_state.step` -> output records, in one Python loop.

It is the floor the Spark job is benchmarked against, the fast path for reports and tests, and the
reference for the batching invariance the Spark job must keep: micro-batches here are cut exactly like
Spark's (consecutive records, grouped by `group_key`), so any `max_events_per_batch` gives the same
records (except `emitted_ts`) in the same order.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter
from pathlib import Path

from streaming.core.config import Limits, PipelineConfig
from streaming.core.events import group_key
from streaming.core.group_state import step_state
from streaming.core.lines import read_lines
from streaming.core.records import KINDS, REPLAY_DIRS, OutputRecord, SourceRecord, batch_file_name
from streaming.core.state_codec import GroupState, decode, encode

_BY_ORDER = attrgetter("order")  # the records' sort key: a C getter, where a lambda is a call per record
_DEFAULT_LIMITS = Limits()
YOUNG_COLLECTION_THRESHOLD = 50_000


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def log_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files a log path names: the file itself, or the directory's *.jsonl files in name order."""
    p = Path(path)
    if p.is_dir():
        return sorted(f for f in p.glob("*.jsonl") if f.is_file())
    return [p]


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

    Records are taken in micro-batches of `max_events_per_batch` (None: all at once); see `replay_batches`.
    """
    if max_events_per_batch is not None and max_events_per_batch < 1:
        raise ValueError(f"max_events_per_batch: expected a positive integer, got {max_events_per_batch}")
    it = iter(records)
    batches = iter(lambda: list(islice(it, max_events_per_batch)), []) if max_events_per_batch else iter([list(it)])
    outputs = replay_batches(batches, config, now_ms, states=states)
    try:
        for out in outputs:
            yield from out
    finally:  # closed early: `replay_batches` ends now, not when its generator is collected
        outputs.close()


def replay_batches(
    batches: Iterable[list[SourceRecord]],
    config: PipelineConfig,
    now_ms: Callable[[], int] = wall_clock_ms,
    *,
    states: dict[str, bytes] | None = None,
) -> Generator[list[OutputRecord], None, None]:
    """One list of output records per micro-batch, in source order; one state blob per group.

    Per batch, each group's records go to one `step` call, as Spark would do. `states` (group -> blob) may
    be passed in to resume or to inspect the final states; it is brought up to date when the replay ends
    (exhausted or closed). In between, states stay decoded in memory: with many groups a batch holds about
    one event per group, and a blob round trip per batch would cost as much as the event itself.

    While it runs, the cyclic collector's first generation waits for `YOUNG_COLLECTION_THRESHOLD` new objects
    instead of 700: a round allocates thousands of short-lived containers that reference counting frees, and
    each collection they triggered walked the survivors, the decoded states of every group included (on the
    100k-event bench log 11 % of the loop's CPU time went to collections; the states form no cycles, so memory
    stays the same).
    """
    states = {} if states is None else states
    live: dict[str, GroupState] = {}  # decoded states of the groups met so far
    stale: set[str] = set()  # groups whose blob in `states` is behind `live`
    limits = config.limits
    thresholds = gc.get_threshold()
    raised = (max(thresholds[0], YOUNG_COLLECTION_THRESHOLD), *thresholds[1:])
    gc.set_threshold(*raised)
    try:
        for batch in batches:
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
            out.sort(key=_BY_ORDER)
            yield out
    finally:
        if gc.get_threshold() == raised:  # unless changed since (another replay ended in between)
            gc.set_threshold(*thresholds)
        for group in stale:
            states[group] = encode(live[group])


def line_count(path: str | os.PathLike[str]) -> int:
    """Lines of a complete log file: "\n"-terminated ones, plus a last line without one."""
    count, last = 0, b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


def line_batches(paths: Sequence[str | os.PathLike[str]], max_lines: int | None, *,
                 max_event_bytes: int = _DEFAULT_LIMITS.max_event_bytes) -> Iterator[list[SourceRecord]]:
    """A complete log's records cut into micro-batches as the Spark JSONL source cuts them (Trigger.AvailableNow
    with `maxOffsetsPerTrigger`): windows of `max_lines` consecutive lines across the files in order, blank
    lines counted, so a window of blank lines is an empty batch; None: one batch. Batch i here is batch id i
    of a fresh Spark replay of the same log."""
    if max_lines is not None and max_lines < 1:
        raise ValueError(f"max_lines: expected a positive integer, got {max_lines}")
    base = 0  # lines of the files before this one
    batch: list[SourceRecord] = []
    window = 0
    for index, path in enumerate(paths):
        for rec in read_jsonl(path, index, max_event_bytes=max_event_bytes):
            at = (base + rec.order[1] - 1) // max_lines if max_lines else 0
            while window < at:
                yield batch
                batch, window = [], window + 1
            batch.append(rec)
        base += line_count(path)
    total = -(-base // max_lines) if max_lines else min(base, 1)  # batches a fresh query runs
    while window < total:
        yield batch
        batch, window = [], window + 1


def clear_batches(out: str | os.PathLike[str]) -> None:
    """Remove the batch files of an earlier replay into `out` (a fresh replay restarts at batch 0)."""
    for directory in REPLAY_DIRS.values():
        for f in (Path(out) / directory).glob("batch-*.jsonl"):
            f.unlink()


@dataclass
class ReplayCounts:
    """What a replay read and wrote."""

    events: int = 0  # records read (non-blank lines)
    batches: int = 0
    written: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))


def replay_files(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    config: PipelineConfig,
    *,
    max_events_per_batch: int | None,
    on_batch: Callable[[int, int, ReplayCounts], None] | None = None,
) -> ReplayCounts:
    """`rebalance replay --engine local`: the log through `replay_batches`, each batch's records written to
    `out/<kind dir>/batch-<id>.jsonl` (atomically, via a hidden temp file) as the Spark replay writes them,
    so both engines leave byte-identical files but for `emitted_ts`. `on_batch(batch_id, events, totals)`
    is called after each batch (progress)."""
    out = Path(out)
    clear_batches(out)
    counts = ReplayCounts()
    batches = line_batches(paths, max_events_per_batch, max_event_bytes=config.limits.max_event_bytes)
    sizes: list[int] = []

    def counted() -> Iterator[list[SourceRecord]]:
        for batch in batches:
            sizes.append(len(batch))
            yield batch

    for batch_id, records in enumerate(replay_batches(counted(), config)):
        for kind in KINDS:
            lines = [r.value for r in records if r.kind == kind]
            if lines:
                final = out / REPLAY_DIRS[kind] / batch_file_name(batch_id)
                final.parent.mkdir(parents=True, exist_ok=True)
                tmp = final.with_name(f".{final.name}.tmp")
                tmp.write_bytes(b"".join(line + b"\n" for line in lines))
                os.replace(tmp, final)
                counts.written[kind] += len(lines)
        counts.events += sizes[batch_id]
        counts.batches += 1
        if on_batch is not None:
            on_batch(batch_id, sizes[batch_id], counts)
    return counts

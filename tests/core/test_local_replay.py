"""The plain-Python pipeline: JSONL reading, and output that does not depend on micro-batching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_group_state import available, random_history

from streaming.core.config import PipelineConfig
from streaming.core.local import line_batches, line_count, read_jsonl, replay
from streaming.core.records import SourceRecord

SAMPLES = Path(__file__).resolve().parents[2] / "whatif" / "samples"


def write_log(path: Path, events: list[dict | bytes]) -> Path:
    path.write_bytes(b"".join((e if isinstance(e, bytes) else json.dumps(e).encode()) + b"\n" for e in events))
    return path


def test_line_batches_cut_windows_of_lines_across_files_as_the_spark_source_does(tmp_path: Path) -> None:
    """Blank lines count towards a window, a window of blank lines is an empty batch (Spark still runs a
    batch id for it), windows run on across files, and a last line without a newline counts."""
    a = tmp_path / "a.jsonl"
    a.write_bytes(b"a1\n\n\n\na5\n")
    b = tmp_path / "b.jsonl"
    b.write_bytes(b"b1\nb2\nb3-no-newline")
    assert (line_count(a), line_count(b)) == (5, 3)
    cut = [[r.value for r in batch] for batch in line_batches([a, b], 2)]
    assert cut == [[b"a1"], [], [b"a5", b"b1"], [b"b2", b"b3-no-newline"]]
    assert [[r.value for r in batch] for batch in line_batches([a, b], None)] == [[b"a1", b"a5", b"b1", b"b2",
                                                                                     b"b3-no-newline"]]
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    assert list(line_batches([empty], 3)) == []


def test_read_jsonl_positions(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_bytes(b'{"a": 1}\n\n   \r\n{"b": 2}\r\nlast-without-newline')
    records = list(read_jsonl(log, file_index=3))
    assert [r.value for r in records] == [b'{"a": 1}', b'{"b": 2}', b"last-without-newline"]
    assert [r.source for r in records] == [{"file": "events.jsonl", "line": n} for n in (1, 4, 5)]
    assert [r.order for r in records] == [(3, 1), (3, 4), (3, 5)]
    assert all(r.key is None and r.timestamp_ms is None for r in records)


def test_read_jsonl_does_not_load_an_oversized_line(tmp_path: Path) -> None:
    log = tmp_path / "big.jsonl"
    log.write_bytes(b"x" * 5_000 + b"\n" + b'{"ok": 1}\n')
    records = list(read_jsonl(log, max_event_bytes=100))
    # a prefix carrying the true size: step() dead-letters it as oversized
    assert [(len(r.value), r.size) for r in records] == [(100, 5_000), (9, None)]
    assert records[1].source["line"] == 2


def replay_values(records: list[SourceRecord], config: PipelineConfig, batch: int | None) -> list[tuple]:
    """Everything of every output record; a fixed clock makes even `emitted_ts` comparable."""
    return [(o.kind, o.key, o.order, o.value)
            for o in replay(records, config, now_ms=lambda: 0, max_events_per_batch=batch)]


@pytest.mark.parametrize("strategies", [("range", "roundrobin"), ("uniform", "server-range"),
                                        ("sticky", "cooperative-sticky")])
def test_same_records_whatever_the_batching(tmp_path: Path, strategies: tuple[str, ...]) -> None:
    config = PipelineConfig(strategies=tuple(available(s) for s in strategies))
    events = random_history(11, n_events=120, groups=("g1", "g2", "g3"))
    records = list(read_jsonl(write_log(tmp_path / "log.jsonl", events)))
    whole = replay_values(records, config, None)
    assert any(k == "dead-letter" for k, *_ in whole) and sum(k == "diff" for k, *_ in whole) > 100
    for batch in (1, 7):  # byte-identical records, in the same order
        assert replay_values(records, config, batch) == whole


def test_shuffled_batches_give_the_same_records(tmp_path: Path) -> None:
    """Spark may hand a group's rows in any order within a batch: step() sorts them by source order."""
    config = PipelineConfig(strategies=("range",))
    events = random_history(5, n_events=80, groups=("g1", "g2"))
    records = list(read_jsonl(write_log(tmp_path / "log.jsonl", events)))
    reversed_batches = [r for i in range(0, len(records), 10) for r in reversed(records[i:i + 10])]
    assert (replay_values(reversed_batches, config, 10) == replay_values(records, config, 1))


def test_replay_keeps_states_and_resumes(tmp_path: Path) -> None:
    config = PipelineConfig(strategies=("range",), optimality=False)
    records = list(read_jsonl(write_log(tmp_path / "log.jsonl", random_history(8, groups=("a", "b")))))
    whole = replay_values(records, config, 5)
    assert all(json.loads(v).get("min_moves", None) is None for *_, v in whole)
    states: dict[str, bytes] = {}
    head = [(o.kind, o.key, o.order, o.value) for o in replay(records[:40], config, now_ms=lambda: 0, states=states)]
    tail = [(o.kind, o.key, o.order, o.value) for o in replay(records[40:], config, now_ms=lambda: 0, states=states)]
    assert head + tail == whole
    assert set(states) == {"a", "b"}


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*.jsonl") if p.name != "large-group.jsonl"))
def test_bundled_samples_replay_without_dead_letters(sample: str) -> None:
    """Only flapping-member has dead letters: the two leaves its capture recorded twice."""
    config = PipelineConfig(strategies=("range", "uniform"))
    out = list(replay(read_jsonl(SAMPLES / sample), config, now_ms=lambda: 0))
    dead = [json.loads(o.value)["reason"] for o in out if o.kind != "diff"]
    assert out and len(dead) == (2 if sample == "flapping-member.jsonl" else 0), dead[:3]
    assert all(reason.startswith("leave of unknown member") for reason in dead)
    if sample == "static-restarts.jsonl":  # restarts within the session timeout: replacements, no rounds
        phases = [json.loads(o.value)["phase"] for o in out]
        assert phases.count("replace") == 2 * 12 and phases.count("eager") == phases.count("incremental") == 6


def test_rejects_bad_batch_size() -> None:
    with pytest.raises(ValueError, match="max_events_per_batch"):
        list(replay([], PipelineConfig(), max_events_per_batch=0))


def test_the_loop_collects_young_objects_less_often_and_restores_the_collector_after() -> None:
    """`replay_batches` raises the first generation's threshold while it runs and puts the caller's back when it
    ends, exhausted or closed early (a replay inside a service must not retune the whole process for good)."""
    import gc

    from streaming.core.local import YOUNG_COLLECTION_THRESHOLD

    joins = [{"group": f"g{i % 3}", "type": "join", "member": f"m{i}", "topics": ["t"]} for i in range(1, 10)]
    events = [SourceRecord(json.dumps(j).encode(), None, {"file": "x", "line": i}, (0, i), None)
              for i, j in enumerate(joins, 1)]
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        running = replay(iter(events), PipelineConfig(), max_events_per_batch=2)
        next(running)
        assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, 10, 10)
        running.close()
        assert gc.get_threshold() == (700, 10, 10)
        assert len(list(replay(iter(events), PipelineConfig()))) > 0
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)

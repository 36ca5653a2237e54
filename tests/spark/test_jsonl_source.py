"""The JSONL source's reader logic without Spark: offsets, admission control, line positions, growth."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from streaming.core.lines import SIZE_HEADER
from streaming.core.local import read_jsonl
from streaming.spark import jsonl_source
from streaming.spark.jsonl_source import JsonlStreamReader


def _rows(reader: JsonlStreamReader, start: dict, end: dict) -> list[tuple]:
    return [row for part in reader.partitions(start, end) for row in reader.read(part)]


def test_offsets_are_line_counts_and_limits_cap_lines(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(b'{"n":1}\n\n{"n":3}\r\n{"n":4}\n')
    (tmp_path / "b.jsonl").write_bytes(b'{"n":5}\n{"n":6}')  # no final newline: the last line still counts
    (tmp_path / "notes.txt").write_text("ignored")
    reader = JsonlStreamReader(str(tmp_path), max_per_trigger=3, max_event_bytes=100, complete=True)
    assert reader.getDefaultReadLimit() == ReadMaxRows(3)
    reader.prepareForTriggerAvailableNow()  # the log is complete (replay without resume): its last line counts

    first = reader.latestOffset({}, ReadMaxRows(3))
    assert first == {"a.jsonl": 3}
    second = reader.latestOffset(first, ReadMaxRows(3))
    assert second == {"a.jsonl": 4, "b.jsonl": 2}
    assert reader.latestOffset(second, ReadMaxRows(3)) == second  # nothing new
    assert reader.latestOffset({}, ReadAllAvailable()) == second

    rows = _rows(reader, {}, first) + _rows(reader, first, second)
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [
        (b'{"n":1}', "a.jsonl", 0, 1), (b'{"n":3}', "a.jsonl", 0, 3), (b'{"n":4}', "a.jsonl", 0, 4),
        (b'{"n":5}', "b.jsonl", 1, 1), (b'{"n":6}', "b.jsonl", 1, 2),
    ]
    assert all(r[0] is None and r[5] is None and r[6] == -1 for r in rows)  # key, timestamp, timestampType


def test_rows_match_read_jsonl_for_long_files_and_oversized_lines(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(jsonl_source, "_INDEX_STRIDE", 4)  # exercise the sparse line index
    monkeypatch.setattr(jsonl_source, "_LINES_PER_TASK", 5)  # and ranges split over several tasks
    lines = [b'{"i":%d}' % i for i in range(23)]
    lines[7] = b'{"big":"' + b"x" * 300 + b'"}'
    lines[12] = b""
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    reader = JsonlStreamReader(str(log), max_per_trigger=None, max_event_bytes=100)
    mid = reader.latestOffset({}, ReadMaxRows(9))
    end = reader.latestOffset(mid, ReadAllAvailable())
    rows = _rows(reader, {}, mid) + _rows(reader, mid, end)
    expected = list(read_jsonl(log, max_event_bytes=100))
    assert [(r[1], r[4]) for r in rows] == [(e.value, e.source["line"]) for e in expected]
    # oversized: a prefix, with the true size in the header `load` would give it (dead-lettered downstream)
    assert len(rows[7][1]) == 100 and rows[7][7] == [(SIZE_HEADER, b"310")] and expected[7].size == 310
    assert all(r[7] is None for i, r in enumerate(rows) if i != 7)


def test_available_now_pins_the_end_and_growth_is_picked_up(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"n":1}\n{"n":2}\n')
    reader = JsonlStreamReader(str(log), max_per_trigger=None, max_event_bytes=100)
    assert reader.latestOffset({}, ReadAllAvailable()) == {"log.jsonl": 2}
    with log.open("ab") as f:
        f.write(b'{"n":3}\n{"n":')  # a line being written: a continuous query waits for its newline
    assert reader.latestOffset({}, ReadAllAvailable()) == {"log.jsonl": 3}
    with log.open("ab") as f:
        f.write(b'4}\n')
    assert reader.latestOffset({}, ReadAllAvailable()) == {"log.jsonl": 4}
    assert [r[1] for r in _rows(reader, {"log.jsonl": 2}, {"log.jsonl": 4})] == [b'{"n":3}', b'{"n":4}']
    pinned = JsonlStreamReader(str(log), max_per_trigger=None, max_event_bytes=100)
    pinned.prepareForTriggerAvailableNow()
    with log.open("ab") as f:
        f.write(b'{"n":5}\n')
    assert pinned.latestOffset({}, ReadAllAvailable()) == {"log.jsonl": 4}

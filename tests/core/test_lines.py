"""The one line reader (`core.lines`) and the two commands that read logs through it: `load` produces, line
for line, what `replay` reads, so both dead-letter the same lines with the same reasons and sizes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from streaming.core.config import Limits, PipelineConfig
from streaming.core.lines import BOM, PREFIX_BYTES, SIZE_HEADER, read_lines, true_size
from streaming.core.local import read_jsonl, replay
from streaming.core.records import SourceRecord
from streaming.kafka.loader import log_records


def lines(data: bytes, max_bytes: int = 10, **kw) -> list[tuple[int, bytes, int]]:
    kw.setdefault("complete", True)
    return [(x.number, x.value, x.size) for x in read_lines(io.BytesIO(data), max_bytes, **kw)]


def test_numbers_count_blank_lines_and_crlf_is_one_ending() -> None:
    assert lines(b'a\n\nb\r\n  \nc') == [(1, b"a", 1), (3, b"b", 1), (5, b"c", 1)]


def test_a_last_line_without_newline_waits_unless_the_log_is_complete() -> None:
    assert lines(b"a\nhalf", complete=False) == [(1, b"a", 1)]
    assert lines(b"a\nhalf", complete=True) == [(1, b"a", 1), (2, b"half", 4)]
    assert lines(b"a\n" + b"z" * 100, complete=False) == [(1, b"a", 1)]  # an over-long half line too


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
def test_every_length_around_the_limit_is_whole_or_one_cut_line(ending: bytes) -> None:
    for n in range(1, 30):
        got = lines(b"x" * n + ending + (b"y\n" if ending else b""), max_bytes=10)
        assert got[0] == ((1, b"x" * n, n) if n <= 10 else (1, b"x" * 10, n)), (n, got)
        assert got[1:] == ([(2, b"y", 1)] if ending else [])


def test_a_giant_line_is_one_prefix_with_its_true_size_never_split() -> None:
    tail = json.dumps({"group": "g", "type": "join", "member": "m", "topics": ["t"]}).encode()
    giant = b'{"pad": "' + b"x" * (3 << 20) + b'"} ' + tail  # its tail alone would be a valid event
    got = lines(giant + b"\nq\n", max_bytes=1 << 20)
    assert got == [(1, giant[:PREFIX_BYTES], len(giant)), (2, b"q", 1)]


def test_a_bom_at_the_start_is_dropped() -> None:
    assert lines(BOM + b'{"a":1}\n' + BOM + b"\n", max_bytes=100) == [(1, b'{"a":1}', 7), (2, BOM, 3)]


def test_a_range_of_lines_from_a_position() -> None:
    data = b"".join(b"%d\n" % i for i in range(1, 21))
    f = io.BytesIO(data)
    f.seek(data.index(b"4\n"))
    got = [(x.number, x.value) for x in read_lines(f, 10, complete=True, number=4, first=6, last=8)]
    assert got == [(6, b"6"), (7, b"7"), (8, b"8")]


def test_true_size_trusts_a_header_only_for_a_prefix() -> None:
    assert true_size(b"abc", 10) == 10
    assert true_size(b"abc", 3) is None and true_size(b"abc", -5) is None and true_size(None, 10) is None


POISON = [
    b'{"pad": "' + b"x" * 2_000_000 + b'"} {"group": "g", "type": "join", "member": "evil", "topics": ["t"]}',
    b"\xff\xfe not utf-8 \xc3",
    b"{",
    b'  "group": "g",',
    b'{"group": "g", "type": "join", "member": "m9", "topics": ["t"], "group": "h"}',
    b"[" * 5000,
    b'{"group": "g", "type": "partitions", "partitions": {"t": ' + b"9" * 5000 + b"}}",
    "é".encode() * 600_000,  # over-long, cut inside a character
    b'{"group": "g", "type": "join", "member": "half", "topics": ["t"]',
]


def poison_log(path: Path) -> Path:
    good = [{"group": "g", "type": "partitions", "partitions": {"t": 4}},
            {"group": "g", "type": "join", "member": "m1", "topics": ["t"]},
            {"group": "g", "type": "join", "member": "m2", "topics": ["t"]},
            {"group": "g", "type": "leave", "member": "m1"}]
    body = []
    for i, bad in enumerate(POISON):
        body.append(json.dumps(good[i % len(good)]).encode())
        body.append(bad)
    path.write_bytes(BOM + b"\n".join(body))  # and no final newline
    return path


def test_load_produces_what_replay_reads(tmp_path: Path) -> None:
    """The records `load` produces, read back as the Kafka source reads them, dead-letter exactly the lines
    (reason, original, true size) and produce exactly the diffs that `replay` of the file gives."""
    log = poison_log(tmp_path / "poison.jsonl")
    config = PipelineConfig(("sticky",), Limits())
    from_file = list(replay(read_jsonl(log), config, now_ms=lambda: 0))
    loaded = [SourceRecord(r.value, r.key, {"file": "poison.jsonl", "line": n}, (0, n), None,
                           true_size(r.value, int(dict(r.headers)[SIZE_HEADER]) if r.headers else None))
              for n, r in enumerate(log_records(log, 2), 1)]
    numbered = {n: rec.source["line"] for n, rec in enumerate(read_jsonl(log), 1)}
    from_load = list(replay(loaded, config, now_ms=lambda: 0))

    def norm(outs, lines=None):
        got = []
        for o in outs:
            d = json.loads(o.value)
            src = d.get("source") or d["cause"]["source"]
            if lines:
                src["line"] = lines[src["line"]]
            got.append((o.kind, json.dumps(d, sort_keys=True)))
        return got

    assert norm(from_load, numbered) == norm(from_file)
    dead = [json.loads(o.value) for o in from_file if o.kind == "dead-letter"]
    assert len(dead) == len(POISON)
    reasons = [d["reason"] for d in dead]
    assert reasons[0] == f"event of {len(POISON[0])} bytes exceeds the limit of 1048576 bytes"
    assert dead[0]["original_bytes"] == len(POISON[0]) and dead[0]["truncated"] is True
    assert "one JSON object per line" in reasons[2] and "one JSON object per line" in reasons[3]
    assert reasons[4] == "invalid JSON: duplicate key 'group'"
    assert reasons[5] == "invalid JSON: nested too deeply"
    assert reasons[6] == "invalid JSON: integer of 5000 digits"
    assert dead[7]["original_bytes"] == len(POISON[7]) and dead[7]["original"].startswith("éé")
    assert dead[8]["source"]["line"] == 2 * len(POISON)  # the last line, without newline: read (complete)
    assert not [d for d in dead if "evil" in (d.get("original") or "")[-200:]]
    diffs = [json.loads(o.value) for o in from_file if o.kind == "diff"]
    assert diffs and all(d["cause"].get("member") != "evil" for d in diffs)

"""`--timing rebalance_ms=N,heartbeat_ms=N` on `replay`, `serve` and `demo` (docs/cost.md): parsed into the
pipeline's timing, bad values refused with exit code 2 and one line naming the key, and the records of a replay
computed with what was given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streaming.cli.main import main
from streaming.core.config import MAX_TIMING_MS, Timing, parse_timing

UNREACHABLE = "127.0.0.1:1"


@pytest.mark.parametrize(("text", "timing"), [
    ("", Timing(3_000, 5_000)),
    ("rebalance_ms=800", Timing(800, 5_000)),
    ("heartbeat_ms=3000", Timing(3_000, 3_000)),
    (" rebalance_ms = 0 , heartbeat_ms=7 ", Timing(0, 7)),
    ("heartbeat_ms=4000,rebalance_ms=observed", Timing(3_000, 4_000, observed=True)),
    (f"rebalance_ms={MAX_TIMING_MS}", Timing(MAX_TIMING_MS, 5_000)),
])
def test_timing_values(text: str, timing: Timing) -> None:
    assert parse_timing(text) == timing
    assert parse_timing(timing.text()) == timing  # what the report and docs show reads back


BAD = [
    ("rebalance_ms=3s", "--timing: rebalance_ms: expected an integer number of milliseconds or 'observed', got '3s'"),
    ("heartbeat_ms=observed", "--timing: heartbeat_ms: expected an integer number of milliseconds, got 'observed'"),
    ("heartbeat_ms=-1", "--timing: heartbeat_ms: expected an integer number of milliseconds, got '-1'"),
    ("rebalance_ms=2.5", "--timing: rebalance_ms: expected an integer number of milliseconds or 'observed'"),
    ("rebalance_ms", "--timing: rebalance_ms: expected rebalance_ms=N (milliseconds), got 'rebalance_ms'"),
    ("session_ms=10", "--timing: unknown key 'session_ms'; expected rebalance_ms=N,heartbeat_ms=N"),
    ("rebalance_ms=1,rebalance_ms=observed", "--timing: rebalance_ms: given twice"),
    (f"heartbeat_ms={MAX_TIMING_MS + 1}", f"--timing: heartbeat_ms: {MAX_TIMING_MS + 1} ms is above the maximum"),
    ("heartbeat_ms=" + "9" * 5_000, "--timing: heartbeat_ms: 999"),
]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_replay_refuses_a_bad_timing_in_one_line(tmp_path: Path, capsys, text: str, message: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"group": "g", "type": "partitions", "partitions": {"t": 1}}\n')
    assert main(["replay", str(log), "--out", str(tmp_path / "out"), "--timing", text]) == 2
    line = _one_line(capsys)
    assert line.startswith(f"rebalance replay: {message}"), line
    assert not (tmp_path / "out" / "diffs").exists()  # refused before anything ran


@pytest.mark.parametrize("command", [["serve", "--bootstrap", UNREACHABLE], ["demo"]])
def test_serve_and_demo_refuse_it_before_touching_a_broker(command: list[str], capsys) -> None:
    assert main([*command, "--timing", "rebalance_ms=soon"]) == 2
    line = _one_line(capsys)
    assert line == (f"rebalance {command[0]}: --timing: rebalance_ms: expected an integer number of milliseconds "
                    "or 'observed', got 'soon'")


def test_a_replay_computes_its_records_with_the_timing_given(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    events = [{"group": "g", "type": "partitions", "partitions": {"t": 5}},
              {"group": "g", "type": "join", "member": "a", "topics": ["t"]},
              {"group": "g", "type": "join", "member": "b", "topics": ["t"]}]
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    out = tmp_path / "out"
    assert main(["replay", str(log), "--out", str(out), "--engine", "local", "--strategies", "sticky,uniform",
                 "--timing", "rebalance_ms=1200,heartbeat_ms=3001"]) == 0
    records = [json.loads(line) for f in sorted((out / "diffs").glob("*.jsonl")) for line in f.read_text().splitlines()]
    last = {r["strategy"]: r for r in records}
    assert (last["sticky"]["paused"], last["sticky"]["stopped_ms"]) == (5, 6_000)  # eager: all 5, 1.2 s each
    assert (last["uniform"]["paused"], last["uniform"]["stopped_ms"]) == (2, 3_001)  # 2 revoked, 1.5005 s each

"""Bad input at the command line, as a hostile user gives it: each case exits with its documented code and
prints ONE line naming the problem (no traceback, no silent success)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streaming.cli.main import main

UNREACHABLE = "127.0.0.1:1"  # nothing listens on port 1: the connection is refused at once


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _assign(tmp_path: Path, text: str, strategy: str = "sticky") -> list[str]:
    path = tmp_path / "snapshot.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return ["assign", "--strategy", strategy, str(path)]


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 200_000 + "]" * 200_000, "invalid JSON: nested too deeply"),
    ('{"topics": {"t": ' + "9" * 5000 + '}, "members": {}}', "invalid JSON: integer of 5000 digits"),
    ('{"topics": {"t": 3}, "members": {"a": {"topics": ["t"], "generation": 99999999999999999999}}}',
     "members['a'].generation: 99999999999999999999 is outside Kafka's 32-bit range"),
    ('{"topics": {"t\\ud800": 3}, "members": {}}', "unpaired UTF-16 surrogate"),
    ('{"topics": {"t": 3}, "topics": {"t": 4}, "members": {}}', "invalid JSON: duplicate key 'topics'"),
])
def test_assign_hostile_snapshot(tmp_path: Path, capsys, text: str, message: str) -> None:
    assert main(_assign(tmp_path, text)) == 2
    line = _one_line(capsys)
    assert line.startswith("rebalance assign: ") and message in line, line


def test_assign_unknown_strategy_is_named_as_such(tmp_path: Path, capsys) -> None:
    assert main(_assign(tmp_path, '{"topics": {}, "members": {}}', strategy="nope")) == 2
    line = _one_line(capsys)
    assert line.startswith("rebalance assign: --strategy: unknown strategy 'nope'; expected one of range"), line


@pytest.mark.parametrize("command", [
    ["load", "LOG", "--bootstrap", UNREACHABLE],
    ["report", "--bootstrap", UNREACHABLE, "--out", "OUT/report.html"],
])
def test_unreachable_broker_is_one_line_exit_1(tmp_path: Path, capsys, command: list[str]) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"group": "g", "type": "leave", "member": "m"}) + "\n")
    argv = [str(log) if a == "LOG" else a.replace("OUT", str(tmp_path)) for a in command]
    assert main(argv) == 1
    line = _one_line(capsys)
    assert line.startswith(f"rebalance {command[0]}: cannot reach Kafka at {UNREACHABLE}"), line


@pytest.mark.parametrize("source", ["offsets", "describe"])
def test_capture_from_a_broker_that_does_not_answer_is_one_line_and_no_file(tmp_path: Path, capsys,
                                                                            source: str) -> None:
    """A wrong port: the wait is --connect-timeout, then one line with what to check; no empty file is left."""
    out = tmp_path / "history.jsonl"
    argv = ["capture", "--bootstrap", UNREACHABLE, "--source", source, "--out", str(out), "--connect-timeout", "1"]
    assert main(argv) == 1
    assert _one_line(capsys) == (
        f"rebalance capture: cannot reach Kafka at {UNREACHABLE} (no answer within 1 s; --connect-timeout waits "
        "longer); check the address (--bootstrap), that the broker is up and advertises a listener reachable from "
        "here, and the security settings (--kafka-option security.protocol=..., sasl.*, ssl.*)")
    assert not out.exists()
    assert main([*argv[:-1], "0"]) == 2
    assert _one_line(capsys) == "rebalance capture: --connect-timeout: expected a positive number of seconds, got 0.0"


@pytest.mark.parametrize(("args", "message"), [
    (["--out", "FILE"], "--out FILE: not a directory"),
    (["--out", "FILE/sub"], "--out FILE/sub: cannot write: Not a directory"),
    (["--report", "FILE/report.html"], "--report FILE/report.html: directory FILE does not exist"),
    (["--report", "DIR"], "--report DIR: is a directory"),
    (["--checkpoint", "FILE"], "--checkpoint FILE: not a directory"),
])
def test_replay_unwritable_outputs_fail_before_spark(tmp_path: Path, capsys, args: list[str], message: str) -> None:
    """Checked before Spark starts (these tests run in well under a second: no Spark session is built)."""
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"group": "g", "type": "leave", "member": "m"}) + "\n")
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()

    def fill(a: str) -> str:
        return a.replace("FILE", str(tmp_path / "file")).replace("DIR", str(tmp_path / "dir"))

    argv = ["replay", str(log), "--out", str(tmp_path / "out"), *map(fill, args)]
    assert main(argv) == 2
    assert _one_line(capsys) == f"rebalance replay: {fill(message)}"


def test_report_unwritable_out_is_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "file").write_text("x")
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "file" / "r.html")]) == 2
    out = tmp_path / "file"
    assert _one_line(capsys) == f"rebalance report: --out {out}/r.html: directory {out} does not exist"


def test_a_spark_or_jvm_failure_is_one_line_exit_1(tmp_path: Path, capsys, monkeypatch) -> None:
    """What `replay`/`serve` print when the query fails or the JVM dies (the real failures run to ~100 lines)."""
    from py4j.protocol import Py4JJavaError, Py4JNetworkError
    from pyspark.errors import PySparkException

    import streaming.cli.replay as replay_command

    log = tmp_path / "log.jsonl"
    log.write_text("{}\n")
    refused = ConnectionRefusedError(111, "Connection refused")
    refused.__context__ = Py4JNetworkError("Answer from Java side is empty")
    query_failed = PySparkException("[STREAM_FAILED] Query [id = 2] terminated with exception: task failed")
    query_failed.__context__ = Py4JJavaError.__new__(Py4JJavaError)  # PySpark's `raise converted from None`
    for error, expected in [
        (query_failed,  # the JVM answered with the query's failure: not a lost JVM (CI stop 22 said it was)
         "rebalance replay: Spark failed: [STREAM_FAILED] Query [id = 2] terminated with exception: task failed"),
        (PySparkException("\n  [STREAM_FAILED] Query [id = 1] terminated with exception\n  at ..."),
         "rebalance replay: Spark failed: [STREAM_FAILED] Query [id = 1] terminated with exception"),
        (Py4JNetworkError("Answer from Java side is empty"),
         "rebalance replay: the Spark JVM stopped answering (killed, or out of memory?)"),
        (refused,  # a killed JVM: py4j's reconnect fails over its own error (seen in tests/integration/test_faults)
         "rebalance replay: the Spark JVM stopped answering (killed, or out of memory?)"),
    ]:
        def fail(args, error=error):
            raise error

        monkeypatch.setattr(replay_command, "run", fail)
        assert main(["replay", str(log), "--out", str(tmp_path / "out")]) == 1
        line = _one_line(capsys)
        assert line.startswith(expected) and line.endswith("(REBALANCE_TRACEBACK=1 shows the full trace)"), line


def _replay(tmp_path: Path, data: bytes, *extra: str) -> list[str]:
    log = tmp_path / "log.jsonl"
    log.write_bytes(data)
    return ["replay", str(log), "--out", str(tmp_path / "out"), *extra]


def test_replay_of_a_binary_file_says_so_before_any_engine_starts(tmp_path: Path, capsys) -> None:
    """An executable or a compressed log: named as binary from its first bytes. With `--engine spark` a run
    would dead-letter every line and end in another message: this one means Spark never started."""
    data = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\n" + bytes(range(256)) * 64
    assert main(_replay(tmp_path, data, "--engine", "spark")) == 2
    assert _one_line(capsys) == f"rebalance replay: {tmp_path}/log.jsonl: a binary file, not a log of JSON events " \
                                "(one per line)"
    assert not (tmp_path / "out").exists()


def test_replay_of_a_file_without_a_valid_line_names_the_first_reason(tmp_path: Path, capsys) -> None:
    data = b'{"group": "g", "type": "rebalance-now"}\n\nnot json\n'
    assert main(_replay(tmp_path, data, "--engine", "spark")) == 2
    assert _one_line(capsys) == (
        f"rebalance replay: {tmp_path}/log.jsonl: none of its 2 lines is a valid event; line 1: field 'type': "
        "unknown type 'rebalance-now'; expected one of join, leave, subscribe, partitions, delete_topic, "
        "generation, delete_group, traffic")
    assert not (tmp_path / "out").exists()


def test_replay_whose_every_event_the_group_rejects_exits_2(tmp_path: Path, capsys) -> None:
    """Valid lines that only the group's state rejects (leaves of members that never joined)."""
    data = b"".join(json.dumps({"group": "g", "type": "leave", "member": m}).encode() + b"\n" for m in "xy")
    assert main(_replay(tmp_path, data, "--engine", "local")) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[replay] batch")]
    assert err == [f"rebalance replay: {tmp_path}/log.jsonl: none of its 2 events is valid; line 1: leave of "
                   f"unknown member 'x' (dead letters in {tmp_path}/out/dead-letter/)"]


def test_replay_of_a_log_with_a_valid_event_runs_and_names_only_folders_it_wrote(tmp_path: Path, capsys) -> None:
    """A log whose tail a crash filled with NUL bytes still replays (its bad line is a dead letter); a clean
    log's summary names the diffs folder and no dead-letter folder, which it never created."""
    join = json.dumps({"group": "g", "type": "join", "member": "m", "topics": ["t"]}).encode() + b"\n"
    sizes = json.dumps({"group": "g", "type": "partitions", "partitions": {"t": 2}}).encode() + b"\n"
    assert main(_replay(tmp_path, sizes + join + b"\0" * 9000, "--engine", "local")) == 0
    out = capsys.readouterr().out
    assert f"1 dead letters (33.3%) in {tmp_path}/out/dead-letter/" in out, out

    assert main(_replay(tmp_path, sizes + join, "--engine", "local", "--out", str(tmp_path / "clean"))) == 0
    out = capsys.readouterr().out
    assert f"diff records in {tmp_path}/clean/diffs/, 0 dead letters (0.0%)\n" in out, out
    assert not (tmp_path / "clean" / "dead-letter").exists()

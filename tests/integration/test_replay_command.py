"""`rebalance replay` as a user runs it (in-process, on the session's Spark): exit codes, output layout,
the what-if report, and resuming from a checkpoint."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pipeline_helpers import config, interrupt, local_records, spark_jvm_booting

from streaming.cli.main import main

pytestmark = pytest.mark.spark

SAMPLE = Path(__file__).parents[2] / "whatif" / "samples" / "topic-growth.jsonl"


def test_replay_command_writes_diffs_and_report(spark, tmp_path: Path, capsys) -> None:
    out, report = tmp_path / "out", tmp_path / "report.html"
    assert main(["replay", str(SAMPLE), "--out", str(out), "--report", str(report), "--engine", "spark"]) == 0

    files = sorted((out / "diffs").glob("*.jsonl"))
    assert files and not list((out / "dead-letter").glob("*.jsonl"))
    diffs = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    expected, _ = local_records(SAMPLE, config("sticky,cooperative-sticky"))
    assert [d["generation"] for d in diffs] == [d["generation"] for d in expected]
    assert "<html" in report.read_text()[:500].lower()
    assert "diff records" in capsys.readouterr().out


def test_replay_command_resumes_from_checkpoint(spark, tmp_path: Path) -> None:
    lines = SAMPLE.read_text().splitlines(keepends=True)
    log, out, ckpt = tmp_path / "growing.jsonl", tmp_path / "out", tmp_path / "ckpt"
    log.write_text("".join(lines[:4]))
    assert main(["replay", str(log), "--out", str(out), "--checkpoint", str(ckpt)]) == 0
    log.write_text("".join(lines))  # the log grew: only the new lines are processed
    assert main(["replay", str(log), "--out", str(out), "--checkpoint", str(ckpt)]) == 0

    diffs = [json.loads(line) for f in sorted((out / "diffs").glob("*.jsonl")) for line in f.read_text().splitlines()]
    expected, _ = local_records(log, config("sticky,cooperative-sticky"))
    strip = [{k: v for k, v in d.items() if k != "emitted_ts"} for d in diffs]
    assert strip == [{k: v for k, v in d.items() if k != "emitted_ts"} for d in expected]


def test_replay_command_rejects_unreadable_input(spark, tmp_path: Path) -> None:
    assert main(["replay", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "out")]) == 2
    assert main(["replay", str(SAMPLE), "--strategies", "nope"]) == 2


def test_replay_leaves_a_half_written_last_line_for_the_resumed_run(spark, tmp_path: Path, capsys) -> None:
    """A capture file being appended: with --checkpoint, a last line without its newline is not read (no dead
    letter); once completed, the next run reads it whole; the result equals a replay of the finished log."""
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    log, out, ckpt = tmp_path / "capture.jsonl", tmp_path / "out", tmp_path / "ckpt"
    half = len(lines[5]) // 2
    log.write_bytes(b"".join(lines[:5]) + lines[5][:half])
    assert main(["replay", str(log), "--out", str(out), "--checkpoint", str(ckpt)]) == 0
    assert "the last line has no newline yet; it is left for the next run" in capsys.readouterr().err
    assert not list((out / "dead-letter").glob("*.jsonl"))
    with log.open("ab") as f:
        f.write(lines[5][half:] + b"".join(lines[6:]))
    assert main(["replay", str(log), "--out", str(out), "--checkpoint", str(ckpt)]) == 0
    assert '[replay] resuming after batch 0 (offsets {"capture.jsonl": 5})' in capsys.readouterr().err

    diffs = [json.loads(line) for f in sorted((out / "diffs").glob("*.jsonl")) for line in f.read_text().splitlines()]
    expected, _ = local_records(log, config("sticky,cooperative-sticky"))
    assert [(d["cause"]["source"], d["generation"]) for d in diffs] == \
        [(d["cause"]["source"], d["generation"]) for d in expected]
    assert not list((out / "dead-letter").glob("*.jsonl"))

    # the newest offsets file of a committed batch lost: named before Spark starts, with what to do
    (ckpt / "offsets" / "1").unlink()
    assert main(["replay", str(log), "--out", str(out), "--checkpoint", str(ckpt)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"rebalance replay: checkpoint {ckpt}: offsets/1 is missing although commits/1 says batch 1 "
                   f"completed (newest: offsets/0); Spark cannot resume from it: restore {ckpt} from a backup, or "
                   "start over with a new --checkpoint (all input is then processed again and its output written "
                   "again)"]


def test_ctrl_c_during_replay_exits_130_with_one_line(tmp_path: Path) -> None:
    """Ctrl-C as a terminal sends it (SIGINT to the whole process group) while micro-batches run."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"".join(f.read_bytes() for f in sorted(SAMPLE.parent.glob("*.jsonl"))))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streaming.cli.main", "replay", str(log), "--out", str(tmp_path / "out"),
         "--max-events-per-batch", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, cwd=tmp_path)
    code, after = interrupt(proc, "replay")
    assert code == 130, after
    assert after == ["rebalance replay: interrupted; with --checkpoint, the next run resumes after the last "
                     "completed batch"], after


INTERRUPTED = ("rebalance replay: interrupted; with --checkpoint, the next run resumes after the last completed "
               "batch")


@pytest.mark.parametrize("moment", ["jvm-starting", "state", "files-written"])
def test_ctrl_c_to_the_whole_process_group_of_a_spark_replay(tmp_path: Path, moment: str) -> None:
    """SIGINT to every process of the run (the command, Spark's JVM, its Python worker daemon and workers)
    while the JVM boots, while a worker is inside the state function, or once a task has written its part
    files: the one line, exit 130, and no traceback or Java trace from any of them."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"".join(f.read_bytes() for f in sorted(SAMPLE.parent.glob("*.jsonl"))))
    marker = tmp_path / "paused"
    env = dict(os.environ)
    if moment != "jvm-starting":  # batch 1: a worker holds there (streaming.spark.faults)
        env.update(REBALANCE_FAULT=f"{moment}:1", REBALANCE_FAULT_MARKER=str(marker))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streaming.cli.main", "replay", str(log), "--out", str(tmp_path / "out"),
         "--engine", "spark", "--max-events-per-batch", "50"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, cwd=tmp_path, env=env)
    if moment == "jvm-starting":
        code, after = interrupt(proc, "replay", lambda: spark_jvm_booting(proc.pid), after_batch=False)
    else:
        code, after = interrupt(proc, "replay", marker.exists)
    assert code == 130, after
    assert after[-1] == INTERRUPTED and after.count(INTERRUPTED) == 1, after
    assert not [line for line in after if re.search(r"Traceback|Exception|Error|\tat ", line)], after


def mixed_log(path: Path) -> Path:
    """Three groups interleaved, a blank line, a line that is not JSON and a leave of an unknown member."""
    samples = Path(__file__).parents[2] / "whatif" / "samples"
    logs = [(samples / f"{name}.jsonl").read_text().splitlines() for name in ("rolling-deploy", "static-restarts",
                                                                             "topic-growth")]
    lines = [line for row in zip(*(log[:9] for log in logs), strict=True) for line in row]
    lines[5:5] = ["", "{not json", '{"group":"ledger-writer","type":"leave","member":"nobody","ts":1732200000999}']
    path.write_text("\n".join(lines) + "\n")
    return path


def test_local_and_spark_engines_write_byte_identical_files(spark, tmp_path: Path, capsys) -> None:
    """Same log, same batch size, same timing: the same batch files with the same bytes, but for `emitted_ts`."""
    log = mixed_log(tmp_path / "mixed.jsonl")
    common = ["--strategies", "range,cooperative-sticky,uniform", "--max-events-per-batch", "7",
              "--timing", "rebalance_ms=1700,heartbeat_ms=4999"]
    for engine in ("local", "spark"):
        assert main(["replay", str(log), "--out", str(tmp_path / engine), "--engine", engine, *common]) == 0
        summary = capsys.readouterr().out
        assert "replayed 29 events in" in summary and f"({engine} engine)" in summary, summary
        assert "2 dead letters (6.9%)" in summary, summary

    def files(root: Path) -> dict[str, bytes]:
        return {str(f.relative_to(root)): re.sub(rb',"emitted_ts":\d+', b"", f.read_bytes())
                for f in sorted(root.glob("*/*.jsonl"))}

    local, spark_files = files(tmp_path / "local"), files(tmp_path / "spark")
    assert list(local) == list(spark_files) and len(local) > 4  # 30 lines in batches of 7: ids 0-4
    assert local == spark_files
    first = next(text for name, text in local.items() if name.startswith("diffs/"))  # a batch may rebalance nobody
    groups = {json.loads(line)["group"] for line in first.splitlines()}
    assert len(groups) >= 2  # a batch holds several groups, written in source order by both engines
    records = [json.loads(line) for name, text in spark_files.items() if name.startswith("diffs/")
               for line in text.splitlines()]
    per_partition = {r["stopped_ms"] / r["paused"] for r in records if r["paused"] and r["strategy"] == "range"}
    assert per_partition == {1_700}  # the timing reached the Spark job's executors
    assert any(r["strategy"] == "uniform" and isinstance(r["stopped_ms"], float) for r in records)  # 4999 / 2


def test_too_many_dead_letters_exit_3_after_writing_the_output(tmp_path: Path, capsys) -> None:
    log = mixed_log(tmp_path / "mixed.jsonl")
    argv = ["replay", str(log), "--out", str(tmp_path / "out"), "--engine", "local"]
    assert main([*argv, "--max-dead-letter-ratio", "0.05"]) == 3
    assert "2 of 29 events (6.9%) were dead-lettered" in capsys.readouterr().err
    assert list((tmp_path / "out" / "dead-letter").glob("*.jsonl"))
    assert main([*argv, "--max-dead-letter-ratio", "0.07"]) == 0
    assert main([*argv, "--max-dead-letter-ratio", "1.5"]) == 2


def test_auto_engine_skips_spark_for_small_logs_and_checkpoints_need_spark(tmp_path: Path, capsys) -> None:
    assert main(["replay", str(SAMPLE), "--out", str(tmp_path / "out")]) == 0
    assert "(local engine)" in capsys.readouterr().out
    assert main(["replay", str(SAMPLE), "--engine", "local", "--checkpoint", str(tmp_path / "c")]) == 2

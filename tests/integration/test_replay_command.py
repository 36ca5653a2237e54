"""`rebalance replay` as a user runs it (in-process, on the session's Spark): exit codes, output layout,
the what-if report, and resuming from a checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline_helpers import config, local_records

from streaming.cli.main import main

pytestmark = pytest.mark.spark

SAMPLE = Path(__file__).parents[2] / "whatif" / "samples" / "topic-growth.jsonl"


def test_replay_command_writes_diffs_and_report(spark, tmp_path: Path, capsys) -> None:
    out, report = tmp_path / "out", tmp_path / "report.html"
    assert main(["replay", str(SAMPLE), "--out", str(out), "--report", str(report)]) == 0

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

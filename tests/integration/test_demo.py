"""`rebalance demo` as a newcomer runs it: local broker, bundled histories, the streaming job, the report, and
a closing summary that matches the report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streaming.cli.demo import sample_logs
from streaming.cli.main import main

pytestmark = [pytest.mark.spark, pytest.mark.kafka]


def test_demo_prints_one_line_per_strategy_the_report_path_and_next_steps(spark, tmp_path: Path, capsys) -> None:
    report = tmp_path / "demo.html"
    assert main(["demo", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert report.is_file() and f"report: {report.resolve()}" in out
    assert "rebalance capture" in out and "rebalance replay" in out and "rebalance report" in out
    assert "2 dead letters" in out  # the flapping member's repeated leaves

    page = report.read_text(encoding="utf-8")
    summaries = re.findall(r'<table class="summary" data-group="[^"]*">(.*?)</table>', page, re.S)
    assert len(summaries) == len(sample_logs())  # one ranking table per bundled history
    expected = [(strategy, int(moves), int(paused)) for table in summaries
                for strategy, moves, paused in re.findall(r'<tr class="[^"]*" data-strategy="([^"]+)">.*?'
                                                          r'data-col="moves">(\d+)<.*?data-col="paused">(\d+)<', table)]
    lines = re.findall(r"^  (\S+)\s+moved\s+([\d,]+)\s+paused\s+([\d,]+)", out, re.M)
    assert [(s, int(m.replace(",", "")), int(p.replace(",", ""))) for s, m, p in lines] == expected
    assert len(expected) == len(sample_logs()) * 2  # the default strategies

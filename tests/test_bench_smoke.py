"""Keeps `bench/assignors.py` from rotting: its quick mode runs every strategy and kafka-python's peers on
tiny groups. No timing assertions (speed is measured by running the bench, not by tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from assignors import STRATEGIES
from tests.whatif.test_report_browser import probe

ROOT = Path(__file__).resolve().parents[1]


def test_quick_bench_runs_every_strategy_and_the_peers(tmp_path):
    page = tmp_path / "bench.html"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.assignors", "--quick", "--repeat", "1", "--plot", str(page)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = proc.stdout.splitlines()
    assert table[0].split()[:4] == ["scenario", "strategy", "ours:", "cpu"]
    rows = [line.split() for line in table[2:] if line and not line.startswith(("peak RSS", "plot"))]
    for strategy in STRATEGIES:
        assert any(strategy in row for row in rows), f"{strategy} missing from the bench table"
    # kafka-python ran where it can (its RoundRobin crashes on differing subscriptions, a known bug).
    assert any("range" in row and "yes" in row for row in rows)
    assert "peak RSS" in proc.stdout
    assert "[1/" in proc.stderr  # progress
    # the plot, laid out by a real browser: two panels of bars, one legend entry per strategy
    found = probe(page, tmp_path)
    assert found["plotly"] == "object"
    (figure,) = found["figures"]
    assert figure["width"] > 400 and figure["height"] > 400
    assert figure["bars"] >= 2 * len(STRATEGIES)  # every strategy in both panels


def test_script_form_does_not_shadow_the_package():
    """`python bench/assignors.py` must import the `assignors` package, not itself."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "assignors.py"), "--quick", "--repeat", "1", "--only", "range",
         "--scenario", "fresh", "--no-peer"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "range" in proc.stdout

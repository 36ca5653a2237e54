"""Keeps the benches from rotting: `bench/assignors.py`'s quick mode runs every strategy and kafka-python's
peers on tiny groups; `bench/pipeline.py --skip spark` runs the plain loop per strategy set. No timing
assertions (speed is measured by running the bench, not by tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from assignors import STRATEGIES
from bench.pipeline import generate_log
from streaming.build import loaded_compiled
from streaming.core.config import PipelineConfig, parse_strategies
from streaming.core.local import read_jsonl, replay
from tests.whatif.test_report_browser import probe

ROOT = Path(__file__).resolve().parents[2]


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


def test_pipeline_bench_loop_only_times_each_strategy_set(tmp_path):
    """`--skip spark`: one loop row per `--strategies` set and build, in the order given (the compiled modules
    where the install compiled them, then the pure-Python ones, with the ratio), with as many records as
    the same log gives through `local.replay` here, and the peak RSS; Spark is never started."""
    sets = ["range,roundrobin", "sticky,cooperative-sticky"]
    proc = subprocess.run(
        [sys.executable, "-m", "bench.pipeline", "--events", "300", "--groups", "30", "--seed", "7", "--skip", "spark",
         "--workdir", str(tmp_path), *(arg for s in sets for arg in ("--strategies", s))],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "starting Spark" not in proc.stderr
    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("strategies "))
    assert lines[head - 1].startswith("Plain loop") and "300 events, 30 groups" in lines[head - 1]
    builds = ["mypyc", "python"] if loaded_compiled() else ["python"]
    rows = [line.split() for line in lines[head + 1:head + 1 + len(sets) * len(builds)]]
    assert [(row[0], row[1]) for row in rows] == [(s, b) for s in sets for b in builds]
    log = generate_log(tmp_path / "same.jsonl", 300, 30, seed=7)
    assert (tmp_path / "throughput.jsonl").read_bytes() == log.read_bytes()
    for row in rows:
        names, build, records, cpu_s, cpu_rate, wall_s, wall_rate, rss, unit, *ratio = row
        assert len(ratio) == (build == "mypyc") and all(r.endswith("x") for r in ratio)
        expected = sum(1 for _ in replay(read_jsonl(log), PipelineConfig(parse_strategies(names))))
        assert int(records.replace(",", "")) == expected
        assert float(cpu_s) > 0 and float(wall_s) > 0
        assert int(cpu_rate.replace(",", "")) > 0 and int(wall_rate.replace(",", "")) > 0
        assert float(rss) > 10 and unit == "MiB"
    (summary,) = [line for line in lines if line.startswith("peak RSS:")]
    assert "Python driver" in summary and "Spark JVM not started" in summary


def test_pipeline_bench_rejects_unknown_skip_and_strategy():
    for args in (["--skip", "loop,nothing"], ["--strategies", "range,nope"]):
        proc = subprocess.run([sys.executable, "-m", "bench.pipeline", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert ("nothing" if args[0] == "--skip" else "nope") in proc.stderr

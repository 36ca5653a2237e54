"""`rebalance assign` through the real console script: JSON out with exit 0, or exit 2 with one line naming
the problem (unreadable file, invalid JSON, a bad field by its JSON path, an unknown strategy)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assignors import STRATEGIES, assign
from assignors.snapshot import load_snapshot
from streaming.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "assignors" / "examples" / "snapshot.json"


def rebalance() -> str:
    script = Path(sys.executable).with_name("rebalance")
    found = str(script) if script.exists() else shutil.which("rebalance")
    assert found, "the `rebalance` console script is not installed (pip install -e .)"
    return found


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([rebalance(), "assign", *args], capture_output=True, text=True, input=stdin, timeout=60)


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_assigns_the_bundled_example(strategy):
    proc = run("--strategy", strategy, str(EXAMPLE))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    expected = assign(strategy, *load_snapshot(json.loads(EXAMPLE.read_text())))
    assert out == {"assignment": {m: [list(p) for p in parts] for m, parts in expected.items()}}


def test_range_on_the_example_is_rack_aligned():
    """The example's replicas leave each partition off one rack, so Range aligns consumers with racks."""
    out = json.loads(run("--strategy", "range", str(EXAMPLE)).stdout)["assignment"]
    assert out == {
        "orders-app-1-5f3c": [["orders", 0], ["orders", 2], ["payments", 0]],
        "orders-app-2-9a1e": [["orders", 1], ["orders", 3], ["payments", 1]],
        "orders-app-3-c27d": [["audit", 1], ["orders", 4], ["payments", 2]],
        "orders-app-4-07b2": [["audit", 0], ["orders", 5]],
    }


def test_reads_stdin_with_dash():
    proc = run("--strategy", "roundrobin", "-", stdin='{"topics": {"t": 2}, "members": {"a": {"topics": ["t"]}}}')
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"assignment": {"a": [["t", 0], ["t", 1]]}}


def assert_usage_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_unknown_strategy():
    assert_usage_error(run("--strategy", "nope", str(EXAMPLE)), "strategy: unknown strategy 'nope'", "range")


def test_missing_file(tmp_path):
    assert_usage_error(run("--strategy", "range", str(tmp_path / "absent.json")), "cannot read", "absent.json")


def test_invalid_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"topics": {"t": 1},\n "members": }')
    assert_usage_error(run("--strategy", "range", str(path)), "bad.json: invalid JSON", "line 2")


@pytest.mark.parametrize(
    ("snapshot", "field"),
    [
        ([], "snapshot: expected an object"),
        ({"members": {}}, "topics: required field is missing"),
        ({"topics": {"t": -1}, "members": {}}, "topics.t: must be >= 0"),
        ({"topics": {"t": 1.5}, "members": {}}, "topics.t: expected an integer"),
        ({"topics": {}, "members": {"c-1": {}}}, "members.c-1.topics: required field is missing"),
        ({"topics": {}, "members": {"c-1": {"topics": "t"}}}, "members.c-1.topics: expected a list"),
        ({"topics": {}, "members": {"c-1": {"topics": ["t", 1]}}}, "members.c-1.topics[1]: expected a string"),
        (
            {"topics": {"t": 3}, "members": {"c-1": {"topics": ["t"], "owned": [["t", 0], ["t", 1], ["t"]]}}},
            "members.c-1.owned[2]: expected a [topic, partition] pair",
        ),
        (
            {"topics": {"t": 3}, "members": {"c-1": {"topics": ["t"], "owned": [["t", -2]]}}},
            "members.c-1.owned[0][1]: must be >= 0",
        ),
        ({"topics": {}, "members": {"c-1": {"topics": [], "generation": "7"}}}, "members.c-1.generation"),
        ({"topics": {}, "members": {"c-1": {"topics": [], "rack": 3}}}, "members.c-1.rack: expected a string"),
        ({"topics": {}, "members": {"c-1": {"topics": [], "instanceId": "x"}}}, "members.c-1.instanceId: unknown"),
        ({"topics": {"t": 1}, "members": {}, "partition_racks": {"t": [["a"], ["b"]]}}, "partition_racks.t: 2 entries"),
        ({"topics": {"t": 1}, "members": {}, "partition_racks": {"t": [["a", 5]]}}, "partition_racks.t[0][1]"),
    ],
)
def test_bad_snapshot_names_the_field(tmp_path, capsys, snapshot, field):
    """In-process `main()` (the console script's entry point) keeps the many cases fast."""
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snapshot))
    code = main(["assign", "--strategy", "range", str(path)])
    out, err = capsys.readouterr()
    assert_usage_error(subprocess.CompletedProcess([], code, out, err), field)


def test_bad_snapshot_through_the_console_script(tmp_path):
    path = tmp_path / "snap.json"
    path.write_text(json.dumps({"topics": {"t": 3}, "members": {"c-1": {"topics": ["t"], "owned": [["t", 0], "x"]}}}))
    assert_usage_error(run("--strategy", "range", str(path)), "snap.json: members.c-1.owned[1]: expected a [topic")


def test_missing_required_option_is_a_usage_error():
    proc = run(str(EXAMPLE))
    assert proc.returncode == 2
    assert "--strategy" in proc.stderr


def test_help_names_every_strategy_and_shows_examples(capsys):
    with pytest.raises(SystemExit) as done:
        main(["assign", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert all(name in out for name in STRATEGIES)
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "rebalance replay history.jsonl" in capsys.readouterr().out

"""The report's cost section (docs/cost.md): partition-seconds stopped and lag added per strategy against the raw
records, the "group.protocol=consumer" line and its baseline, and the timing read back from the records."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

from streaming.cli.main import main as cli
from whatif.report import build, render


class CostTables(HTMLParser):
    """{group: {strategy: {column: text}}} from `table.cost`, and each group's migration and timing lines."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, dict[str, str]]] = {}
        self.lines: dict[str, str] = {}
        self.timing: list[str] = []
        self.group = self.strategy = self.col = None
        self.line: str | None = None
        self.in_timing = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("class") == "cost":
            self.group = a["data-group"]
            self.tables[self.group] = {}
        elif tag == "tr" and self.group is not None and "data-strategy" in a:
            self.strategy = a["data-strategy"]
            self.tables[self.group][self.strategy] = {}
        elif tag == "td" and self.strategy is not None:
            self.col = a.get("data-col")
        elif tag == "p" and a.get("class") == "migration":
            self.line = a["data-group"]
            self.lines[self.line] = ""
        elif tag == "p" and a.get("class") == "note timing":
            self.in_timing = True
            self.timing.append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self.group = self.strategy = None
        elif tag == "td":
            self.col = None
        elif tag == "p":
            self.line, self.in_timing = None, False

    def handle_data(self, data):
        if self.col and self.strategy is not None:
            self.tables[self.group][self.strategy][self.col] = data.strip()
        if self.line is not None:
            self.lines[self.line] += data
        if self.in_timing:
            self.timing[-1] += data


def parse(records: list[dict]) -> CostTables:
    page = CostTables()
    page.feed(render(build(records)))
    return page


def seconds(records: list[dict], group: str, strategy: str) -> float:
    """Independent of whatif: sum of stopped_ms over the rounds (first parts, no replacements), in seconds."""
    return sum(r["stopped_ms"] for r in records if r["group"] == group and r["strategy"] == strategy
               and r.get("part", 1) == 1 and r["phase"] != "replace") / 1000


def lag(records: list[dict], group: str, strategy: str) -> str:
    """Independent of whatif: the `lag_added` cell, fsum over the rounds of a group with traffic, else a dash."""
    rounds = [r["lag_added"] for r in records if r["group"] == group and r["strategy"] == strategy
              and r.get("part", 1) == 1 and r["phase"] != "replace" and "lag_added" in r]
    return f"{math.fsum(rounds):,.0f}" if rounds else "–"


def read(out: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((out / "diffs").glob("*.jsonl")) for line in f.read_text().splitlines()
            if line.strip()]


def test_partition_seconds_per_strategy_and_the_move_line(history_diffs) -> None:
    records = [json.loads(line) for line in (history_diffs("rolling-deploy") / "diffs" / "diffs.jsonl")
               .read_text().splitlines()]
    page = parse(records)
    assert page.tables
    assert any("lag_added" in r for r in records)  # the sample has traffic
    for group, table in page.tables.items():
        strategies = list(dict.fromkeys(r["strategy"] for r in records if r["group"] == group))
        assert list(table) == strategies  # configured order
        for name in strategies:
            assert table[name]["partition_seconds"] == f"{seconds(records, group, name):,.1f}"
            assert table[name]["lag_added"] == lag(records, group, name)
        first_classic = next(s for s in strategies if s not in ("uniform", "server-range"))
        line = " ".join(page.lines[group].split())
        assert line.startswith(f"Moving to group.protocol=consumer (uniform) would have stopped "
                               f"{seconds(records, group, 'uniform'):,.1f} partition-seconds instead of "
                               f"{seconds(records, group, first_classic):,.1f} ({first_classic}: the first classic "
                               "strategy replayed"), line
    assert all("3,000 ms per paused partition" in t and "2,500 ms per paused partition" in t for t in page.timing)


def test_a_captured_group_is_weighed_against_itself_with_its_observed_durations(tmp_path: Path) -> None:
    members = {"a": {"topics": ["t"], "assigned": {"t": [0, 1, 2]}}, "b": {"topics": ["t"], "assigned": {"t": [3, 4]}}}
    log = [{"group": "g", "type": "partitions", "partitions": {"t": 5}},
           {"group": "g", "type": "generation", "generation": 1, "protocol": "range",
            "members": {"a": {"topics": ["t"], "assigned": {"t": [0, 1, 2, 3, 4]}}}},
           {"group": "g", "type": "generation", "generation": 2, "protocol": "range", "rebalance_ms": 700,
            "members": members},
           {"group": "g", "type": "generation", "generation": 3, "protocol": "range", "rebalance_ms": 1_300,
            "members": {"a": members["a"]} | {"c": {"topics": ["t"], "assigned": {"t": [3, 4]}}}}]
    path = tmp_path / "captured.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in log))
    report = tmp_path / "report.html"
    assert cli(["replay", str(path), "--out", str(tmp_path / "out"), "--strategies", "sticky,uniform",
                "--timing", "rebalance_ms=observed,heartbeat_ms=4000", "--report", str(report)]) == 0
    records = read(tmp_path / "out")
    page = CostTables()
    page.feed(report.read_text())
    line = " ".join(page.lines["g"].split())
    assert line == (f"Moving to group.protocol=consumer (uniform) would have stopped "
                    f"{seconds(records, 'g', 'uniform'):,.1f} partition-seconds instead of "
                    f"{seconds(records, 'g', 'observed'):,.1f} (observed: what the group itself did as captured "
                    "(range)).")
    # the first generation paused nothing (no captured duration: it would have taken the default, 3 s); the next
    # ones stopped partitions for their captured 0.7 s and 1.3 s
    assert "700 to 1,300 ms per paused partition (the captured durations)" in page.timing[0]
    assert "2,000 ms per paused partition" in page.timing[0]  # heartbeat_ms 4000 / 2


def record(strategy: str, generation: int, paused: int, stopped: float, **extra) -> dict:
    return {"group": "g", "strategy": strategy, "generation": generation, "phase": "eager",
            "cause": {"type": "join", "member": "m", "source": {"file": "x", "line": generation}},
            "changes": {}, "members": 1, "partitions": 4, "assigned": 0, "revoked": 0, "unassigned": 0,
            "paused": paused, "load_min": 0, "load_max": 0, "moves": 0, "min_moves": 0, "stopped_ms": stopped,
            "event_ts": None, "emitted_ts": 0, **extra}


def test_lag_is_summed_and_split_records_and_replacements_count_once() -> None:
    records = [record("sticky", 1, 4, 12_000, lag_added=1_000.4),
               record("sticky", 2, 4, 12_000, lag_added=2_000.4, part=1, parts=2),
               record("sticky", 2, 4, 12_000, lag_added=2_000.4, part=2, parts=2),
               record("uniform", 1, 1, 2_500.5, lag_added=10.0),
               record("uniform", 2, 1, 2_500.5, lag_added=20.0),
               record("uniform", 2, 1, 2_500.5, lag_added=1e9)]
    records[-1]["phase"] = "replace"  # a static replacement is no round
    page = parse(records)
    assert page.tables["g"]["sticky"] == {"partition_seconds": "24.0", "lag_added": "3,001", "rounds": "2"}
    assert page.tables["g"]["uniform"] == {"partition_seconds": "5.0", "lag_added": "30", "rounds": "2"}
    assert " ".join(page.lines["g"].split()).endswith("and added 30 messages of lag instead of 3,001.")
    assert re.search(r"2,500\.5 ms per paused partition", page.timing[0])


def test_records_from_before_the_cost_model_say_so_and_a_missing_target_is_named() -> None:
    old = record("sticky", 1, 4, 0)
    del old["stopped_ms"]
    page = CostTables()
    html = render(build([old]))
    page.feed(html)
    assert page.tables["g"]["sticky"]["partition_seconds"] == "–"
    assert "written before the cost model" in html
    assert "replay with --strategies including uniform" in " ".join(page.lines["g"].split())

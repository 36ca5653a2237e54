"""The report's load lane: msgs/s per member after each rebalance, from the diff records' rate fields (contract §7),
checked against a diffs file written by hand (load_diffs.py); in a real headless Chromium too."""

from __future__ import annotations

import json
import re

import load_diffs
import pytest
from test_report import Tables
from test_report_browser import colour_pixels, probe, screenshot

from streaming.cli.main import main as cli
from whatif.report import STRATEGY_COLOURS, build, load_summary


def expected_loads(records: list[dict]) -> dict[str, dict]:
    """Independent of whatif.report: per strategy, the rates after its last rebalance and the worst over its
    rebalances (a rebalance's load is its last round's: a cooperative revoke round is not the end of it)."""
    out: dict[str, dict] = {}
    by_strategy: dict[str, list[dict]] = {}
    for r in sorted(records, key=lambda r: r["generation"]):
        by_strategy.setdefault(r["strategy"], []).append(r)
    for strategy, rounds in by_strategy.items():
        ends = [r for i, r in enumerate(rounds) if i + 1 == len(rounds) or rounds[i + 1]["phase"] != "followup"]
        last = ends[-1]
        out[strategy] = {"total": last["rate_total"], "least": last["rate_min"], "hottest": last["rate_max"],
                         "over_even": last["rate_max"] / (last["rate_total"] / last["members"]),
                         "worst_over_even": max(r["rate_max"] / (r["rate_total"] / r["members"]) for r in ends),
                         "worst_hottest": max(r["rate_max"] for r in ends)}
    return out


def test_load_summaries_are_the_rates_after_each_strategys_last_rebalance():
    records = load_diffs.clicks_records()
    report = build(records + load_diffs.clicks_records("quiet-app", traffic=False))
    [clicks] = [g for g in report.groups if g.group == "clicks-app"]
    [quiet] = [g for g in report.groups if g.group == "quiet-app"]
    got = {}
    for row in clicks.rows:
        s = load_summary(row)
        got[row.strategy] = {"total": s.final.total, "least": s.final.least, "hottest": s.final.hottest,
                             "over_even": s.final.over_even, "worst_over_even": s.worst_over_even,
                             "worst_hottest": s.worst_hottest}
    assert got == expected_loads(records)
    assert got["cooperative-sticky"]["worst_hottest"] == 1000.0  # a lone member holds everything
    assert [load_summary(row) for row in quiet.rows] == [None, None]
    # the growth of a keyed topic, once per rebalance whatever the strategy
    assert [(b.number, b.keys_moved) for b in clicks.rows[0].history] == [(1, {}), (2, {}), (3, {"clicks": 0.4})]


def test_the_lane_shows_the_load_table_and_the_keys_moved_only_for_groups_with_traffic(tmp_path):
    diffs = load_diffs.write(tmp_path / "diffs")
    page = tmp_path / "report.html"
    assert cli(["report", str(diffs), "--out", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    tables = Tables()
    tables.feed(html)
    load = tables.tables[("load", "clicks-app")]
    cells = {row["data-strategy"]: {c.get("data-col"): text for c, text in cols if c.get("data-col")}
             for row, cols in load if "data-strategy" in row}
    expected = expected_loads(load_diffs.clicks_records())
    for strategy, e in expected.items():
        assert cells[strategy]["hottest"] == f"{e['hottest']:,.1f}" and cells[strategy]["least"] == f"{e['least']:,.1f}"
        assert cells[strategy]["over_even"] == f"{e['over_even']:.2f}×"
    assert cells["range"]["over_least"] == "3.00×"  # 750 / 250
    [growth] = [cols for row, cols in tables.tables[("keys-moved", "clicks-app")] if row.get("class") == "growth"]
    assert [text for c, text in growth if c.get("data-col") == "keys_moved"] == ["40.0%"]
    assert ("load", "quiet-app") not in tables.tables and ("keys-moved", "quiet-app") not in tables.tables
    assert html.count('id="load-') == 1  # one load figure: the group with traffic


@pytest.mark.browser
def test_the_load_lane_renders_in_chromium(tmp_path):
    diffs = load_diffs.write(tmp_path / "diffs")
    page = tmp_path / "report.html"
    assert cli(["report", str(diffs), "--out", str(page)]) == 0
    result = probe(page, tmp_path)
    [figure] = [f for f in result["figures"] if f["id"].startswith("load-")]
    # per strategy: a bar from the least loaded to the hottest member and a marker on the hottest (top), a bar of
    # the hottest in even shares (below); a lone member's bar on top has no height, its marker shows it
    assert figure["width"] > 600 and figure["traces"] == 2 and figure["points"] == 2 * 3, figure
    assert figure["bars"] == 2 * 2 + 2 * 3, figure
    assert result["tables"]["load"] == 2 and result["tables"]["keys-moved"] == 1
    image = screenshot(page, tmp_path)
    assert image.std() > 10
    drawn = {s: colour_pixels(image, STRATEGY_COLOURS[s]) for s in ("range", "cooperative-sticky")}
    assert min(drawn.values()) > 2_000, drawn  # both strategies' bars, side by side


def test_a_record_with_rates_but_no_traffic_before_has_a_lane_only_from_then_on(tmp_path):
    """Traffic that arrives in the middle: rebalances before it have no load (no point drawn, no summary)."""
    records = load_diffs.clicks_records()
    for r in records:
        if r["generation"] == 1:
            for name in ("rate_total", "rate_min", "rate_max"):
                del r[name]
    report = build(json.loads(json.dumps(records)))
    range_row = next(row for row in report.groups[0].rows if row.strategy == "range")
    assert [b.load is not None for b in range_row.history] == [False, True, True]
    assert load_summary(range_row).worst_hottest == 750.0
    assert re.search(r"After rebalance 3 \(the last with traffic\)", _lane_html(report.groups[0], report.strategies))


def _lane_html(group, strategies) -> str:
    from whatif.report import GROUP_LANES

    return "".join(lane(group, strategies) for lane in GROUP_LANES)

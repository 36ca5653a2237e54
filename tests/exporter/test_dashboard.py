"""dashboards/rebalance-replay.json checked against what Grafana requires of a provisioned dashboard (the
fields, ids, grid and datasource references of its JSON model) and against the exporter's metric names.
That every query is valid PromQL that returns data is checked in a real Prometheus
(tests/integration/test_prometheus.py)."""

from __future__ import annotations

import re

import pytest
from dashboard_queries import GRAFANA_BUILTINS, VARIABLE, load_dashboard, panel_queries, variable_queries

from streaming.exporter.prometheus import (
    CONFORMANCE_COUNTERS,
    KEYS_MOVED,
    PREFIX,
    STRATEGY_COUNTERS,
    STRATEGY_GAUGES,
)

PANEL_TYPES = {"row", "stat", "timeseries", "bargauge", "table"}
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


@pytest.fixture(scope="module")
def dashboard() -> dict:
    return load_dashboard()


def exposed_metric_names() -> set[str]:
    counters = [name for name, _, _ in (*STRATEGY_COUNTERS, *CONFORMANCE_COUNTERS)]
    health = ["exporter_records", "exporter_decode_errors", "exporter_untracked_records"]
    gauges = [name for name, _, _ in STRATEGY_GAUGES] + [KEYS_MOVED[0]]
    return ({f"{PREFIX}_{n}_total" for n in (*counters, *health)} | {f"{PREFIX}_{n}" for n in gauges}
            | {f"{PREFIX}_exporter_{n}" for n in ("lag_records", "tracked_groups", "max_groups", "broker_up",
                                                   "caught_up")})


def test_dashboard_model_has_what_grafana_provisioning_needs(dashboard):
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,40}", dashboard["uid"])
    assert dashboard["title"] and isinstance(dashboard["schemaVersion"], int) and dashboard["schemaVersion"] >= 36
    assert set(dashboard["time"]) == {"from", "to"}
    names = [v["name"] for v in dashboard["templating"]["list"]]
    assert names == ["datasource", "group", "strategy"]
    assert dashboard["templating"]["list"][0] | {"type": "datasource", "query": "prometheus"} == \
        dashboard["templating"]["list"][0]


def test_panels_have_unique_ids_known_types_and_prometheus_targets(dashboard):
    panels = dashboard["panels"]
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)) and all(isinstance(i, int) for i in ids)
    for p in panels:
        assert p["type"] in PANEL_TYPES, p["title"]
        assert p["title"], p
        if p["type"] == "row":
            assert p["gridPos"]["w"] == 24 and p["gridPos"]["h"] == 1 and not p.get("targets")
            continue
        assert p["datasource"] == DATASOURCE, p["title"]
        assert p.get("description"), f"{p['title']}: say what the panel answers"
        refs = [t["refId"] for t in p["targets"]]
        assert refs and len(refs) == len(set(refs)), p["title"]
        assert all(t["datasource"] == DATASOURCE and t["expr"].strip() for t in p["targets"]), p["title"]


def test_panels_tile_the_24_column_grid_without_overlap(dashboard):
    taken: dict[tuple[int, int], str] = {}
    for p in dashboard["panels"]:
        g = p["gridPos"]
        assert g["w"] >= 1 and g["h"] >= 1 and g["x"] >= 0 and g["y"] >= 0 and g["x"] + g["w"] <= 24, p["title"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in taken, f"{p['title']} overlaps {taken[(x, y)]}"
                taken[(x, y)] = p["title"]


def test_queries_use_defined_variables_and_metrics_the_exporter_serves(dashboard):
    defined = {v["name"] for v in dashboard["templating"]["list"]} | set(GRAFANA_BUILTINS)
    exposed = exposed_metric_names()
    queries = [(title, expr) for title, _, expr in panel_queries(dashboard)]
    queries += [(f"variable {name}", expr) for name, expr in variable_queries(dashboard)]
    for title, expr in queries:
        assert set(VARIABLE.findall(expr)) <= defined, title
        used = set(re.findall(rf"\b{PREFIX}_\w+", expr))
        assert used and used <= exposed, f"{title}: {used - exposed}"
    every = " ".join(expr for _, expr in queries)
    unused = {n for n in exposed if not re.search(rf"\b{n}\b", every)}
    assert unused == {f"{PREFIX}_{n}" for n in ("generation", "partitions", "last_round_paused_partitions",
                                                  "exporter_records_total", "exporter_tracked_groups",
                                                  "exporter_max_groups", "exporter_caught_up")}


def test_the_issue_asks_for_an_overview_and_a_group_drill_down(dashboard):
    rows = [p["title"] for p in dashboard["panels"] if p["type"] == "row"]
    assert rows == ["Overview: all groups", "Group drill-down: $group"]
    titles = " | ".join(p["title"] for p in dashboard["panels"])
    for wanted in ("Groups rebalancing most", "Movement beyond the minimum, per strategy",
                   "Paused partitions over time", "Strategy comparison", "Conformance"):
        assert wanted in titles
    drill_down = dashboard["panels"][[p["title"] for p in dashboard["panels"]].index(rows[1]) + 1:]
    assert all('group="$group"' in t["expr"] for p in drill_down for t in p["targets"])


def test_the_group_drill_down_shows_what_rebalances_cost_per_strategy(dashboard):
    """Time stopped and lag added (docs/cost.md) per strategy of the chosen group, from the exporter's counters."""
    panels = {p["title"]: p for p in dashboard["panels"]}
    stopped = panels["Cost: partition-seconds stopped, per strategy"]
    lag = panels["Cost: lag added, per strategy"]
    assert stopped["fieldConfig"]["defaults"]["unit"] == "s"
    for panel, metric in ((stopped, "stopped_partition_seconds"), (lag, "lag_added_messages")):
        assert [t["expr"] for t in panel["targets"]] == [
            f'sum by (strategy) ({PREFIX}_{metric}_total{{group="$group", strategy=~"$strategy"}})']
        assert metric in {name for name, _, _ in STRATEGY_COUNTERS}
        assert "group.protocol=consumer" in stopped["description"]


def test_load_in_msgs_per_second_per_group_and_strategy_and_its_imbalance(dashboard):
    """The load panels read the rate gauges per group and strategy; the imbalance is hottest / least loaded,
    matched on the same (group, strategy) series."""
    panels = {p["title"]: p for p in dashboard["panels"]}
    rate = f"{PREFIX}_rate_{{}}_messages_per_second"
    overview = panels["Load now: msgs/s per group and strategy"]
    exprs = [t["expr"] for t in overview["targets"]]
    for part in ("max", "min", "total"):
        assert any(rate.format(part) in e for e in exprs), part
    assert any(re.fullmatch(rf"{rate.format('max')}(\{{[^}}]*\}})? / {rate.format('min')}(\{{[^}}]*\}})?", e)
               for e in exprs), exprs
    drill = panels["Rate imbalance: hottest / least loaded member"]
    [imbalance] = [t["expr"] for t in drill["targets"]]
    numerator, denominator = imbalance.split(" / ")
    assert numerator == denominator.replace("_min_", "_max_") and rate.format("max") in numerator
    assert drill["fieldConfig"]["defaults"]["unit"] == "x"
    load = panels["Load in msgs/s: hottest and least loaded member"]
    assert load["fieldConfig"]["defaults"]["unit"] == overview["fieldConfig"]["defaults"]["unit"] == "suffix: msgs/s"
    assert {t["legendFormat"] for t in load["targets"]} >= {"{{strategy}} hottest", "{{strategy}} least loaded"}
    assert f"{PREFIX}_keys_moved_ratio" in panels["Keys moved by the last partition increase"]["targets"][0]["expr"]

"""The exporter's exposition without a broker: the per-group text parsed back with prometheus_client's own
parser equals the state, odd group ids included; nothing per group before the exporter caught up."""

from __future__ import annotations

import json

from prometheus_client.parser import text_string_to_metric_families

from streaming.exporter.fold import CONFORMANCE, DIFF, OTHER, MetricState
from streaming.exporter.prometheus import CONFORMANCE_COUNTERS, STRATEGY_COUNTERS, STRATEGY_GAUGES, render_groups
from streaming.exporter.service import Exporter, ExporterConfig

ODD = 'a "quoted" \\ back\nslash-ü'


def diff(group: str, strategy: str, **fields: object) -> bytes:
    record = {"group": group, "strategy": strategy, "generation": 2, "phase": "eager", "members": 3,
              "partitions": 9, "unassigned": 1, "paused": 4, "load_min": 2, "load_max": 4, "moves": 3,
              "min_moves": 1, "stopped_ms": 12_000, "lag_added": 36.5, "event_ts": 1_500, "emitted_ts": 2_000,
              **fields}
    return json.dumps(record).encode()


def filled_state() -> MetricState:
    state = MetricState(max_groups=2)
    for group in ("orders", ODD, "third"):
        for strategy in ("sticky", "range"):
            state.add(DIFF, diff(group, strategy))
    state.add(DIFF, diff("orders", "range", generation=3, rate_total=900, rate_min=150.25, rate_max=600,
                         keys_moved={"clicks": 0.5}))
    state.add(CONFORMANCE, json.dumps({"group": ODD, "generation": 1, "protocol": "range",
                                       "conforms": False}).encode())
    return state


def parsed(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text.decode()) for s in family.samples}


def test_rendered_text_parses_back_to_the_state():
    state = filled_state()
    state.health.caught_up = True
    samples = parsed(render_groups(state))
    expected = {}
    for (group, strategy), s in state.strategies.items():
        labels = (("group", group), ("strategy", strategy))
        for name, _, attr in STRATEGY_COUNTERS:
            expected[(f"rebalance_{name}_total", labels)] = getattr(s, attr)
        for name, _, attr in STRATEGY_GAUGES:
            if group != OTHER and getattr(s, attr) is not None:  # no rate gauges for groups without traffic
                expected[(f"rebalance_{name}", labels)] = getattr(s, attr)
    for (group, topic), share in state.keys_moved.items():
        expected[("rebalance_keys_moved_ratio", (("group", group), ("topic", topic)))] = share
    for (group, protocol), c in state.conformance.items():
        for name, _, attr in CONFORMANCE_COUNTERS:
            expected[(f"rebalance_{name}_total", (("group", group), ("protocol", protocol)))] = getattr(c, attr)
    assert samples == expected
    assert samples[("rebalance_partitions_moved_total", (("group", ODD), ("strategy", "sticky")))] == 3
    assert samples[("rebalance_load_imbalance", (("group", "orders"), ("strategy", "range")))] == 2
    assert samples[("rebalance_last_round_timestamp_seconds", (("group", ODD), ("strategy", "range")))] == 1.5
    assert samples[("rebalance_stopped_partition_seconds_total", (("group", ODD), ("strategy", "sticky")))] == 12.0
    assert samples[("rebalance_lag_added_messages_total", (("group", ODD), ("strategy", "sticky")))] == 36.5
    assert ("rebalance_members", (("group", OTHER), ("strategy", "range"))) not in samples
    orders_range = (("group", "orders"), ("strategy", "range"))
    assert samples[("rebalance_rate_min_messages_per_second", orders_range)] == 150.25
    assert samples[("rebalance_keys_moved_ratio", (("group", "orders"), ("topic", "clicks")))] == 0.5
    assert ("rebalance_rate_max_messages_per_second", (("group", "orders"), ("strategy", "sticky"))) not in samples


def test_no_group_series_before_catching_up_and_health_always():
    exporter = Exporter(ExporterConfig("127.0.0.1:1"))
    for group in ("orders", "payments"):
        exporter.state.add(DIFF, diff(group, "sticky"))
    before = parsed(exporter.exposition())
    assert before[("rebalance_exporter_records_total", (("topic", "rebalance.diffs"),))] == 2
    assert before[("rebalance_exporter_caught_up", ())] == 0
    assert not [k for k in before if ("group", "orders") in k[1]]
    assert any(name == "process_resident_memory_bytes" for name, _ in before)
    exporter.state.health.caught_up = True
    after = parsed(exporter.exposition())
    assert after[("rebalance_rounds_total", (("group", "orders"), ("strategy", "sticky")))] == 1
    exporter.state.add(DIFF, diff("orders", "sticky"))  # a change renders the group text anew
    again = parsed(exporter.exposition())
    assert again[("rebalance_rounds_total", (("group", "orders"), ("strategy", "sticky")))] == 2

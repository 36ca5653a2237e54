"""The pure part of `capture --traffic-interval`: end-offset samples -> `rates` traffic events (contract §7)."""

from __future__ import annotations

import re

import pytest

from streaming.capture.coordinator_events import Translator
from streaming.capture.traffic_poll import Sample, rates_events, subscriptions
from streaming.cli.main import main


def sample(at: float, ends: dict[tuple[str, int], int]) -> Sample:
    return Sample(at, int(at * 1000), ends)


def test_rates_are_offset_deltas_per_second_one_per_partition_the_group_was_told():
    before = sample(10.0, {("orders", 0): 100, ("orders", 1): 5, ("orders", 2): 7, ("audit", 0): 0})
    after = sample(12.5, {("orders", 0): 350, ("orders", 1): 5, ("orders", 2): 8, ("audit", 0): 1})
    events = rates_events({"g-2": {"audit": 1}, "g-1": {"orders": 3}}, before, after)
    assert events == [
        {"group": "g-1", "type": "traffic", "topic": "orders", "rates": [100.0, 0.0, 0.4], "ts": 12500},
        {"group": "g-2", "type": "traffic", "topic": "audit", "rates": [0.4], "ts": 12500},
    ]


def test_a_topic_is_left_out_until_every_partition_has_two_samples_and_offsets_only_grow():
    before = sample(0.0, {("grown", 0): 0, ("recreated", 0): 900, ("steady", 0): 0})
    after = sample(3.0, {("grown", 0): 3, ("grown", 1): 3, ("recreated", 0): 10, ("steady", 0): 1})
    groups = {"g": {"grown": 2, "recreated": 1, "steady": 1}}
    assert [e["topic"] for e in rates_events(groups, before, after)] == ["steady"]
    assert rates_events(groups, after, after) == []  # no time between the samples: no rate


def test_rates_keep_three_decimals():
    events = rates_events({"g": {"t": 1}}, sample(0.0, {("t", 0): 0}), sample(3.0, {("t", 0): 1}))
    assert events[0]["rates"] == [0.333]


def test_subscriptions_are_the_current_members_topics_with_the_counts_the_group_was_told():
    counts = {"orders": 3, "payments": 2, "unknown": None}
    tr = Translator("", re.compile("^g"), lambda t: counts.get(t))
    tr.described("g-1", "range", [], 1)  # an emptied group: nothing subscribed
    tr.seed([{"group": "g-2", "type": "generation", "generation": 4,
              "members": {"a": {"topics": ["payments", "orders"]}, "b": {"topics": ["orders", "unknown"]}}},
             {"group": "g-2", "type": "partitions", "partitions": {"orders": 3, "payments": 2}}])
    assert subscriptions(tr.state) == {"g-2": {"payments": 2, "orders": 3}}


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_traffic_interval_that_is_no_positive_number_is_one_usage_line(capsys, value):
    assert main(["capture", "--bootstrap", "127.0.0.1:1", "--traffic-interval", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"rebalance capture: --traffic-interval: expected a positive number of seconds, got {float(value)}"]

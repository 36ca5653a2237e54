"""The exporter's fold (streaming.exporter.fold): diff and conformance records -> metric state, no Kafka."""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from typing import Any

import pytest

from assignors import STRATEGIES
from streaming.core.config import PipelineConfig, parse_strategies
from streaming.core.local import read_jsonl, replay
from streaming.exporter.fold import CONFORMANCE, DIFF, OTHER, MetricState
from whatif.histories import sample_path


def diff(group: str = "g", strategy: str = "sticky", **fields: Any) -> bytes:
    record = {"group": group, "strategy": strategy, "generation": 1, "phase": "eager",
              "cause": {"type": "join", "member": "c-1"}, "changes": {},
              "members": 2, "partitions": 6, "assigned": 0, "revoked": 0, "unassigned": 0, "paused": 3,
              "load_min": 2, "load_max": 4, "moves": 2, "min_moves": 1, "event_ts": 1_000, "emitted_ts": 5_000}
    record.update(fields)
    return json.dumps(record).encode()


def conformance(group: str = "g", protocol: str = "range", conforms: bool | None = True) -> bytes:
    return json.dumps({"group": group, "generation": 3, "protocol": protocol, "conforms": conforms,
                       "differences": {}, "observed_moves": 0, "expected_moves": 0, "min_moves": 0}).encode()


def sample_diffs(name: str) -> list[bytes]:
    config = PipelineConfig(strategies=parse_strategies("all"))
    return [r.value for r in replay(read_jsonl(sample_path(name)), config, max_events_per_batch=None)
            if r.kind == DIFF]


def test_a_replayed_history_sums_per_group_and_strategy():
    values = sample_diffs("rolling-deploy")
    state = MetricState()
    for v in values:
        assert state.add(DIFF, v) is None
    expected: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(int))
    last: dict[tuple[str, str], dict] = {}
    for r in map(json.loads, values):
        key = (r["group"], r["strategy"])
        e = expected[key]
        e["moves"] += r["moves"]
        e["paused"] += r["paused"]
        e["beyond"] += r["moves"] - r["min_moves"]
        e["rounds"] += r["phase"] != "replace"
        e["rebalances"] += r["phase"] in ("eager", "incremental", "revoke")
        e["stopped_ms"] += r["stopped_ms"]
        e["lag_added"] += r.get("lag_added", 0.0)  # records of a group with traffic carry it
        last[key] = r
    assert set(state.strategies) == set(expected)
    assert len({s for _, s in expected}) == len(STRATEGIES)  # every strategy of the library
    for key, e in expected.items():
        s = state.strategies[key]
        assert (s.moves, s.paused, s.moves_beyond_min, s.rounds, s.rebalances) == (
            e["moves"], e["paused"], e["beyond"], e["rounds"], e["rebalances"]), key
        assert s.stopped_seconds == e["stopped_ms"] / 1000 and s.lag_added == e["lag_added"], key
        r = last[key]
        assert (s.members, s.partitions, s.unassigned, s.load_imbalance, s.generation) == (
            r["members"], r["partitions"], r["unassigned"], r["load_max"] - r["load_min"], r["generation"])
    assert any(s.moves_beyond_min > 0 for s in state.strategies.values())  # the sample is not trivial
    assert state.health.records == {DIFF: len(values), CONFORMANCE: 0}


def test_split_records_count_once_and_replacements_are_not_rounds():
    state = MetricState()
    for part in (1, 2, 3):
        state.add(DIFF, diff(part=part, parts=3, moves=5, min_moves=2, paused=7))
    state.add(DIFF, diff(phase="replace", generation=1, moves=0, min_moves=0, paused=0, event_ts=9_000))
    s = state.strategies[("g", "sticky")]
    assert (s.rounds, s.rebalances, s.moves, s.moves_beyond_min, s.paused) == (1, 1, 5, 3, 7)
    assert s.last_round_ts == 1.0 and s.last_paused == 7  # a replacement is not the last round


def test_stopped_time_and_lag_count_once_per_round_and_older_records_add_nothing():
    state = MetricState()
    for part in (1, 2):
        state.add(DIFF, diff(part=part, parts=2, stopped_ms=7_500.5, lag_added=12.25))
    state.add(DIFF, diff(generation=2, stopped_ms=3_000, lag_added=0.75))
    state.add(DIFF, diff(generation=3))  # written before the cost model: no stopped_ms, no lag_added
    s = state.strategies[("g", "sticky")]
    assert (s.stopped_ms, s.stopped_seconds, s.lag_added, s.rounds) == (10_500.5, 10.5005, 13.0, 3)


def test_cooperative_rounds_unconverged_and_skipped_generations():
    state = MetricState()
    state.add(DIFF, diff(strategy="cooperative-sticky", phase="revoke", generation=1))
    state.add(DIFF, diff(strategy="cooperative-sticky", phase="followup", generation=2, unconverged=True))
    state.add(DIFF, diff(strategy="observed", generation=7, skipped_generations=3, min_moves=None,
                         event_ts=None, emitted_ts=8_000))
    c = state.strategies[("g", "cooperative-sticky")]
    assert (c.rounds, c.rebalances, c.unconverged_rounds, c.generation) == (2, 1, 1, 2)
    o = state.strategies[("g", "observed")]
    assert (o.skipped_generations, o.moves_beyond_min, o.moves, o.last_round_ts) == (3, 0, 2, 8.0)


@pytest.mark.parametrize("value, reason", [
    (None, "no value"),
    (b"\xff\xfe", "not UTF-8"),
    (b"{not json", "invalid JSON"),
    (b"[1, 2]", "not a JSON object"),
    (diff(group=7), "group: expected a string"),
    (diff(strategy="best-fit"), "strategy: unknown 'best-fit'"),
    (diff(phase="later"), "phase: unknown 'later'"),
    (diff(moves="2"), "moves: expected an integer >= 0"),
    (diff(moves=True), "moves: expected an integer >= 0"),
    (diff(paused=-1), "paused: expected an integer >= 0"),
    (diff(min_moves=1.5), "min_moves: expected an integer >= 0 or null"),
    (diff(unconverged="yes"), "unconverged: expected true/false"),
    (diff(stopped_ms="3000"), "stopped_ms: expected a number >= 0 or null"),
    (diff(stopped_ms=-0.5), "stopped_ms: expected a number >= 0 or null"),
    (diff(lag_added=float("nan")), "lag_added: expected a number >= 0 or null"),
    (diff(lag_added=float("inf")), "lag_added: expected a number >= 0 or null"),
    (diff(rate_max=-0.5), "rate_max: expected a number >= 0 (msgs/s)"),
    (diff(rate_total="12"), "rate_total: expected a number >= 0 (msgs/s)"),
    (diff(rate_min=True), "rate_min: expected a number >= 0 (msgs/s)"),
    (diff(rate_min=1e400), "rate_min: expected a number >= 0 (msgs/s)"),  # JSON's 1e400 parses as infinity
    (diff(keys_moved={"orders": 1.5}), "keys_moved: expected {topic: share in [0, 1]}"),
    (diff(keys_moved=[0.5]), "keys_moved: expected {topic: share in [0, 1]}"),
])
def test_an_undecodable_diff_is_counted_and_changes_nothing(value, reason):
    state = MetricState()
    state.add(DIFF, diff())
    before = copy.deepcopy((state.strategies, state.tracked, state.health.records))
    assert reason in state.add(DIFF, value)
    assert (state.strategies, state.tracked, state.health.records) == before
    assert state.strategies[("g", "sticky")].rounds == 1
    assert state.health.decode_errors == {DIFF: 1, CONFORMANCE: 0}


def test_conformance_records_count_checks_mismatches_and_unknowns():
    state = MetricState()
    for value in (conformance(), conformance(conforms=False), conformance(conforms=None),
                  conformance(protocol="my-own-assignor", conforms=None)):
        assert state.add(CONFORMANCE, value) is None
    assert state.add(CONFORMANCE, conformance(conforms="no")) == "conforms: expected true, false or null"
    assert state.add(CONFORMANCE, b'{"group": "g", "protocol": "range", "generation": 1}') is not None
    c = state.conformance[("g", "range")]
    assert (c.checks, c.mismatches, c.unknown) == (3, 1, 1)
    assert state.conformance[("g", "other")].unknown == 1  # a protocol outside the library: one label
    assert state.health.records[CONFORMANCE] == 4 and state.health.decode_errors[CONFORMANCE] == 2


def test_groups_beyond_the_bound_sum_under_other_and_keep_totals_exact():
    state = MetricState(max_groups=2)
    for g in ("a", "b", "c", "d", "a", "c"):
        state.add(DIFF, diff(group=g, moves=1))
    assert state.tracked == {"a", "b"}
    assert state.strategies[("a", "sticky")].moves == 2
    other = state.strategies[(OTHER, "sticky")]
    assert other.moves == 3 and other.members is None  # counters summed, gauges not kept
    assert sum(s.moves for s in state.strategies.values()) == 6
    assert state.health.overflow_records == 3
    state.add(CONFORMANCE, conformance(group="z", conforms=False))
    assert state.conformance[(OTHER, "range")].mismatches == 1


def test_a_real_group_named_like_the_overflow_label_is_not_tracked_on_its_own():
    state = MetricState(max_groups=5)
    state.add(DIFF, diff(group=OTHER))
    assert state.tracked == set() and state.strategies[(OTHER, "sticky")].members is None


def test_groups_regex_filters_by_full_match():
    state = MetricState(groups="orders-.*")
    for g in ("orders-app", "payments", "my-orders-app"):
        state.add(DIFF, diff(group=g))
    assert set(state.strategies) == {("orders-app", "sticky")}
    assert state.health.filtered_records == 2 and state.health.records[DIFF] == 3


def test_max_groups_must_be_positive():
    with pytest.raises(ValueError, match="max_groups"):
        MetricState(max_groups=0)


def test_a_snapshot_does_not_move_with_the_fold():
    state = MetricState()
    state.add(DIFF, diff(moves=2))
    snap = state.snapshot()
    state.add(DIFF, diff(moves=5, group="h"))
    assert snap.strategies[("g", "sticky")].moves == 2 and set(snap.strategies) == {("g", "sticky")}
    assert snap.tracked == {"g"} and snap.health.records[DIFF] == 1 and snap.version == 1
    assert state.strategies[("g", "sticky")].moves == 2 and state.version == 2


def test_a_round_where_kafkas_assignor_throws_is_counted_apart():
    state = MetricState()
    error = {"exception": "java.lang.IllegalStateException", "message": None, "detail": "..."}
    state.add(DIFF, diff(strategy="cooperative-sticky", phase="revoke", moves=0, min_moves=0, error=error))
    state.add(DIFF, diff(strategy="cooperative-sticky", phase="revoke", generation=1))
    s = state.strategies[("g", "cooperative-sticky")]
    assert (s.rounds, s.assignor_errors, s.moves) == (2, 1, 2)


def test_load_in_msgs_per_second_is_a_gauge_of_the_last_round_and_keys_moved_the_last_growth():
    state = MetricState(max_groups=1)
    state.add(DIFF, diff(rate_total=500.0, rate_min=100.5, rate_max=399.5))
    series = state.strategies[("g", "sticky")]
    assert (series.rate_total, series.rate_min, series.rate_max) == (500.0, 100.5, 399.5)
    state.add(DIFF, diff(generation=2, rate_total=500, rate_min=0, rate_max=500, keys_moved={"orders": 0.25}))
    state.add(DIFF, diff(strategy="range", generation=2, rate_total=500, rate_min=250, rate_max=250,
                         keys_moved={"orders": 0.25}))
    assert (series.rate_total, series.rate_min, series.rate_max) == (500.0, 0.0, 500.0)
    assert state.keys_moved == {("g", "orders"): 0.25}
    state.add(DIFF, diff(generation=3))  # the members no longer subscribe to a topic with traffic
    assert (series.rate_total, series.rate_min, series.rate_max) == (None, None, None)
    assert state.keys_moved == {("g", "orders"): 0.25}  # the last growth's share stays
    state.add(DIFF, diff(group="beyond-the-bound", rate_total=9.0, rate_min=1.0, rate_max=8.0, keys_moved={"t": 1}))
    other = state.strategies[(OTHER, "sticky")]
    assert (other.rounds, other.rate_max) == (1, None) and ("beyond-the-bound", "t") not in state.keys_moved

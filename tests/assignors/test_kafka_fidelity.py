"""Kafka's literal answers on minimal cases, as Kafka's Java assignors (trunk 2024-10) give them: the leader's
HashMap member order (A), a partition handed back to a previous owner that no longer subscribes to its topic (B),
and inputs on which Kafka's assignor throws (C)."""

from __future__ import annotations

import pytest

from assignors import KafkaAssignorError, Member, assign
from assignors.javaorder import hashmap_order

STICKY_FAMILY = ("sticky", "cooperative-sticky")


# --- A: members are iterated in the leader's HashMap order, computed from the order received ---------


@pytest.mark.parametrize("strategy", STICKY_FAMILY)
def test_a1_empty_subscription_iterated_first_keeps_the_constrained_path(strategy):
    members = {"c021": Member(["t0"]), "c022": Member([])}
    assert hashmap_order(members) == ["c022", "c021"]
    assert assign(strategy, {"t0": 2}, members) == {"c021": [("t0", 0)], "c022": [("t0", 1)]}


@pytest.mark.parametrize("strategy", STICKY_FAMILY)
def test_a2_generation_conflicts_resolved_in_hashmap_order(strategy):
    members = {
        "c1": Member(["t0"], owned=[("t0", 0)], generation=1),
        "c2": Member(["t0"], owned=[("t0", 0)], generation=1),
        "c3": Member(["t0"], owned=[("t0", 0)], generation=3),
    }
    assert hashmap_order(members) == ["c3", "c1", "c2"]
    assert assign(strategy, {"t0": 1}, members) == {"c1": [], "c2": [], "c3": [("t0", 0)]}


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "uniform", "server-range"])
def test_strategies_that_sort_or_keep_the_given_order_are_unchanged(strategy):
    # Range and RoundRobin sort the leader's members (MemberInfo order); the KIP-848 assignors run on
    # the coordinator, whose member order is the given one: neither depends on the HashMap order
    members = {"c021": Member(["t0"]), "c022": Member(["t0"])}
    forward = assign(strategy, {"t0": 3}, members)
    expected = {"c021": [("t0", 0), ("t0", 1)], "c022": [("t0", 2)]}
    if strategy == "roundrobin":
        expected = {"c021": [("t0", 0), ("t0", 2)], "c022": [("t0", 1)]}
    assert forward == expected


# --- B: a partition goes back to its previous owner although that member dropped the topic ----------


@pytest.mark.parametrize("strategy", STICKY_FAMILY)
def test_b_partition_returns_to_a_previous_owner_that_no_longer_subscribes(strategy):
    members = {
        "c0": Member(["t1", "t0"], owned=[("t0", 0)], generation=1),
        "c1": Member(["t0"], owned=[("t1", 2)], generation=1),
        "c2": Member(["t0", "t1"], generation=4),
    }
    assert assign(strategy, {"t0": 1, "t1": 3}, members) == {
        "c0": [("t0", 0), ("t1", 1)],
        "c1": [("t1", 2)],
        "c2": [("t1", 0)],
    }


# --- C: Kafka's assignor throws ------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STICKY_FAMILY)
def test_c_null_pointer_when_a_previous_owner_is_fixed(strategy):
    members = {
        "c0": Member(["t0", "t1"], owned=[("t0", 46)], generation=1),
        "c1": Member(["t0"], generation=9),
        "c2": Member([], owned=[("t0", 26)], generation=1),
    }
    with pytest.raises(KafkaAssignorError) as err:
        assign(strategy, {"t0": 47, "t1": 47}, members)
    assert not isinstance(err.value, ValueError)
    assert err.value.exception == "java.lang.NullPointerException"
    assert "t0-26" in str(err.value) and "'c2'" in str(err.value)


@pytest.mark.parametrize("strategy", STICKY_FAMILY)
def test_c_illegal_state_when_a_claimed_partition_does_not_exist(strategy):
    with pytest.raises(KafkaAssignorError) as err:
        assign(strategy, {"t0": 1}, {"c0": Member(["t0"], owned=[("t0", 985)])})
    assert err.value.exception == "java.lang.IllegalStateException"
    assert err.value.message == "No more unfilled consumers to be assigned."
    assert "t0-985" in str(err.value) and "'c0'" in str(err.value)

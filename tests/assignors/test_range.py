"""Kafka's `RangeAssignorTest` (clients), ported test by test with its inputs and expectations.

Kafka runs most tests once per `RackConfig` with the test-only `preferRackAwareLogic` switched on by
`initializeRacks`, so the rack-aware code path must reproduce the classic results wherever racks are
uniform. Extra properties Kafka does not assert (completeness, quotas, co-partitioning) follow at the end.
"""

from __future__ import annotations

import enum
import random

import pytest
from kafka_helpers import (
    ALL_RACKS,
    broker_racks,
    members_in_hashmap_order,
    null_racks,
    racks,
    replica_racks,
    run_assignor,
    tp,
    verify_rack_assignment,
)

from assignors import Member, assign
from assignors.range import RangeAssignor

TOPIC1, TOPIC2 = "topic1", "topic2"
CONSUMER1, CONSUMER2, CONSUMER3 = "consumer1", "consumer2", "consumer3"
INSTANCE1, INSTANCE2, INSTANCE3 = "instance1", "instance2", "instance3"
STATIC_MEMBERS = [(CONSUMER1, INSTANCE1), (CONSUMER2, INSTANCE2), (CONSUMER3, INSTANCE3)]


class RackConfig(enum.Enum):
    NO_BROKER_RACK = "NO_BROKER_RACK"
    NO_CONSUMER_RACK = "NO_CONSUMER_RACK"
    BROKER_AND_CONSUMER_RACK = "BROKER_AND_CONSUMER_RACK"


class Env:
    """The per-test state of Kafka's `RangeAssignorTest` (`initializeRacks`, `partitionInfos`, `subscription`)."""

    def __init__(self, rack_config: RackConfig, max_consumers: int = 3) -> None:
        self.replication = max_consumers
        self.num_broker_racks = max_consumers if rack_config != RackConfig.NO_BROKER_RACK else 0
        self.has_consumer_rack = rack_config != RackConfig.NO_CONSUMER_RACK
        self.assignor = RangeAssignor(prefer_rack_aware_logic=True)

    def racks_for(self, topics: dict[str, int]) -> dict[str, list]:
        brokers = broker_racks(self.num_broker_racks, self.replication)
        return {t: replica_racks(n, self.replication, brokers, 0) for t, n in topics.items()}

    def subscription(self, topics: list[str], consumer_index: int, instance_id: str | None = None) -> Member:
        num_racks = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        rack = ALL_RACKS[consumer_index % num_racks] if self.has_consumer_rack else None
        return Member(topics=topics, rack=rack, instance_id=instance_id)

    def assign(self, topics: dict[str, int], members: dict[str, Member]) -> dict[str, list[tuple[str, int]]]:
        return run_assignor(self.assignor, topics, members_in_hashmap_order(members), self.racks_for(topics))


def check_static_assignment(env: Env, topics: dict[str, int], members: dict[str, Member]) -> dict[str, list]:
    by_member = env.assign(topics, members)
    return {m.instance_id: by_member[mid] for mid, m in members.items() if m.instance_id is not None}


@pytest.mark.parametrize("has_consumer_rack", [True, False])
def test_one_consumer_no_topic(has_consumer_rack):
    env = Env(RackConfig.BROKER_AND_CONSUMER_RACK if has_consumer_rack else RackConfig.NO_CONSUMER_RACK)
    assignment = env.assign({}, {CONSUMER1: env.subscription([], 0)})
    assert assignment == {CONSUMER1: []}


@pytest.mark.parametrize("has_consumer_rack", [True, False])
def test_one_consumer_nonexistent_topic(has_consumer_rack):
    env = Env(RackConfig.BROKER_AND_CONSUMER_RACK if has_consumer_rack else RackConfig.NO_CONSUMER_RACK)
    assignment = env.assign({}, {CONSUMER1: env.subscription([TOPIC1], 0)})
    assert assignment == {CONSUMER1: []}


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_one_consumer_one_topic(rack_config):
    env = Env(rack_config)
    assignment = env.assign({TOPIC1: 3}, {CONSUMER1: env.subscription([TOPIC1], 0)})
    assert set(assignment) == {CONSUMER1}
    assert set(assignment[CONSUMER1]) == {tp(TOPIC1, 0), tp(TOPIC1, 1), tp(TOPIC1, 2)}


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_only_assigns_partitions_from_subscribed_topics(rack_config):
    env = Env(rack_config)
    assignment = env.assign({TOPIC1: 3, "other": 3}, {CONSUMER1: env.subscription([TOPIC1], 0)})
    assert set(assignment) == {CONSUMER1}
    assert set(assignment[CONSUMER1]) == {tp(TOPIC1, 0), tp(TOPIC1, 1), tp(TOPIC1, 2)}


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_one_consumer_multiple_topics(rack_config):
    env = Env(rack_config)
    assignment = env.assign({TOPIC1: 1, TOPIC2: 2}, {CONSUMER1: env.subscription([TOPIC1, TOPIC2], 0)})
    assert set(assignment) == {CONSUMER1}
    assert set(assignment[CONSUMER1]) == {tp(TOPIC1, 0), tp(TOPIC2, 0), tp(TOPIC2, 1)}


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_two_consumers_one_topic_one_partition(rack_config):
    env = Env(rack_config)
    members = {CONSUMER1: env.subscription([TOPIC1], 0), CONSUMER2: env.subscription([TOPIC1], 1)}
    assignment = env.assign({TOPIC1: 1}, members)
    assert set(assignment[CONSUMER1]) == {tp(TOPIC1, 0)}
    assert assignment[CONSUMER2] == []


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_two_consumers_one_topic_two_partitions(rack_config):
    env = Env(rack_config)
    members = {CONSUMER1: env.subscription([TOPIC1], 0), CONSUMER2: env.subscription([TOPIC1], 1)}
    assignment = env.assign({TOPIC1: 2}, members)
    assert set(assignment[CONSUMER1]) == {tp(TOPIC1, 0)}
    assert set(assignment[CONSUMER2]) == {tp(TOPIC1, 1)}


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_multiple_consumers_mixed_topics(rack_config):
    env = Env(rack_config)
    members = {
        CONSUMER1: env.subscription([TOPIC1], 0),
        CONSUMER2: env.subscription([TOPIC1, TOPIC2], 1),
        CONSUMER3: env.subscription([TOPIC1], 2),
    }
    assignment = env.assign({TOPIC1: 3, TOPIC2: 2}, members)
    assert set(assignment[CONSUMER1]) == {tp(TOPIC1, 0)}
    assert set(assignment[CONSUMER2]) == {tp(TOPIC1, 1), tp(TOPIC2, 0), tp(TOPIC2, 1)}
    assert set(assignment[CONSUMER3]) == {tp(TOPIC1, 2)}


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_two_consumers_two_topics_six_partitions(rack_config):
    env = Env(rack_config)
    members = {CONSUMER1: env.subscription([TOPIC1, TOPIC2], 0), CONSUMER2: env.subscription([TOPIC1, TOPIC2], 1)}
    assignment = env.assign({TOPIC1: 3, TOPIC2: 3}, members)
    assert set(assignment[CONSUMER1]) == {tp(TOPIC1, 0), tp(TOPIC1, 1), tp(TOPIC2, 0), tp(TOPIC2, 1)}
    assert set(assignment[CONSUMER2]) == {tp(TOPIC1, 2), tp(TOPIC2, 2)}


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_two_static_consumers_two_topics_six_partitions(rack_config):
    # consumer-a sorts before consumer-b, but static members compare by instance id.
    env = Env(rack_config)
    low, high = "consumer-b", "consumer-a"
    members = {
        low: env.subscription([TOPIC1, TOPIC2], 0, instance_id=INSTANCE1),
        high: env.subscription([TOPIC1, TOPIC2], 1, instance_id=INSTANCE2),
    }
    assignment = env.assign({TOPIC1: 3, TOPIC2: 3}, members)
    assert set(assignment[low]) == {tp(TOPIC1, 0), tp(TOPIC1, 1), tp(TOPIC2, 0), tp(TOPIC2, 1)}
    assert set(assignment[high]) == {tp(TOPIC1, 2), tp(TOPIC2, 2)}


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_one_static_consumer_and_one_dynamic_consumer_two_topics_six_partitions(rack_config):
    # The static member wins although its member id sorts last.
    env = Env(rack_config)
    low, high = "consumer-b", "consumer-a"
    members = {
        low: env.subscription([TOPIC1, TOPIC2], 0, instance_id=INSTANCE1),
        high: env.subscription([TOPIC1, TOPIC2], 1),
    }
    assignment = env.assign({TOPIC1: 3, TOPIC2: 3}, members)
    assert set(assignment[low]) == {tp(TOPIC1, 0), tp(TOPIC1, 1), tp(TOPIC2, 0), tp(TOPIC2, 1)}
    assert set(assignment[high]) == {tp(TOPIC1, 2), tp(TOPIC2, 2)}


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_static_member_range_assignment_persistent(rack_config):
    env = Env(rack_config, max_consumers=5)
    topics = {TOPIC1: 5, TOPIC2: 4}
    members = {}
    index = 0
    for member_id, instance_id in STATIC_MEMBERS:
        members[member_id] = env.subscription([TOPIC1, TOPIC2], index, instance_id=instance_id)
        index += 1
    members["consumer4"] = env.subscription([TOPIC1, TOPIC2], index)  # a dynamic member
    index += 1
    expected = {
        CONSUMER1: [tp(TOPIC1, 0), tp(TOPIC1, 1), tp(TOPIC2, 0)],
        CONSUMER2: [tp(TOPIC1, 2), tp(TOPIC2, 1)],
        CONSUMER3: [tp(TOPIC1, 3), tp(TOPIC2, 2)],
        "consumer4": [tp(TOPIC1, 4), tp(TOPIC2, 3)],
    }
    assert env.assign(topics, members) == expected

    # Replace dynamic member 4 with a new dynamic member 5.
    del members["consumer4"]
    members["consumer5"] = env.subscription([TOPIC1, TOPIC2], index)
    expected["consumer5"] = expected.pop("consumer4")
    assert env.assign(topics, members) == expected


@pytest.mark.parametrize("rack_config", list(RackConfig))
def test_static_member_range_assignment_persistent_after_member_id_changes(rack_config):
    env = Env(rack_config)
    topics = {TOPIC1: 5, TOPIC2: 5}
    members = {
        member_id: env.subscription([TOPIC1, TOPIC2], i, instance_id=instance_id)
        for i, (member_id, instance_id) in enumerate(STATIC_MEMBERS)
    }
    expected = {
        INSTANCE1: [tp(TOPIC1, 0), tp(TOPIC1, 1), tp(TOPIC2, 0), tp(TOPIC2, 1)],
        INSTANCE2: [tp(TOPIC1, 2), tp(TOPIC1, 3), tp(TOPIC2, 2), tp(TOPIC2, 3)],
        INSTANCE3: [tp(TOPIC1, 4), tp(TOPIC2, 4)],
    }
    static_assignment = check_static_assignment(env, topics, members)
    assert static_assignment == expected

    # Switch the member ids: the assignment by instance id stays the same.
    members["consumer4"] = members.pop(CONSUMER3)
    members["consumer5"] = members.pop(CONSUMER2)
    assert check_static_assignment(env, topics, members) == static_assignment


def test_rack_aware_static_member_range_assignment_persistent_after_member_id_changes():
    env = Env(RackConfig.BROKER_AND_CONSUMER_RACK)
    brokers = broker_racks(3, 2)
    layout = {t: replica_racks(5, 2, brokers, 0) for t in (TOPIC1, TOPIC2)}
    topics = {TOPIC1: 5, TOPIC2: 5}
    members = {
        member_id: env.subscription([TOPIC1, TOPIC2], i, instance_id=instance_id)
        for i, (member_id, instance_id) in enumerate(STATIC_MEMBERS)
    }

    def by_instance() -> dict[str, list]:
        result = run_assignor(env.assignor, topics, members_in_hashmap_order(members), layout)
        return {m.instance_id: result[mid] for mid, m in members.items()}

    expected = {
        INSTANCE1: [tp(TOPIC1, 0), tp(TOPIC1, 2), tp(TOPIC2, 0), tp(TOPIC2, 2)],
        INSTANCE2: [tp(TOPIC1, 1), tp(TOPIC1, 3), tp(TOPIC2, 1), tp(TOPIC2, 3)],
        INSTANCE3: [tp(TOPIC1, 4), tp(TOPIC2, 4)],
    }
    static_assignment = by_instance()
    assert static_assignment == expected
    members["consumer4"] = members.pop(CONSUMER3)
    members["consumer5"] = members.pop(CONSUMER2)
    assert by_instance() == static_assignment


def verify_non_rack_aware_assignment(assignor: RangeAssignor, topics, consumer_topics, expected) -> None:
    """`verifyNonRackAwareAssignment`: the combinations in which rack logic must not change anything."""
    verify_rack_assignment(assignor, topics, 3, null_racks(3), racks(3), consumer_topics, expected, -1)
    verify_rack_assignment(assignor, topics, 3, racks(3), null_racks(3), consumer_topics, expected, -1)
    verify_rack_assignment(assignor, topics, 3, racks(3), racks(3), consumer_topics, expected, 0)
    verify_rack_assignment(assignor, topics, 4, racks(4), racks(3), consumer_topics, expected, 0)
    verify_rack_assignment(assignor, topics, 3, racks(3), ["d", "e", "f"], consumer_topics, expected, -1)
    verify_rack_assignment(assignor, topics, 3, racks(3), [None, "e", "f"], consumer_topics, expected, -1)
    assignor.prefer_rack_aware_logic = True
    verify_rack_assignment(assignor, topics, 3, racks(3), racks(3), consumer_topics, expected, 0)
    assignor.prefer_rack_aware_logic = False


def test_rack_aware_assignment_with_uniform_subscription():
    assignor = RangeAssignor()
    topics = {"t1": 6, "t2": 7, "t3": 2}
    all_topics = ["t1", "t2", "t3"]
    consumer_topics = [all_topics, all_topics, all_topics]

    verify_non_rack_aware_assignment(
        assignor,
        topics,
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"],
    )
    # Best-effort rack-aware assignment for lower replication factors (racks hold a subset of partitions).
    verify_rack_assignment(
        assignor,
        topics,
        1,
        racks(3),
        racks(3),
        consumer_topics,
        ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"],
        0,
    )
    verify_rack_assignment(
        assignor,
        topics,
        2,
        racks(3),
        racks(3),
        consumer_topics,
        ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"],
        1,
    )
    # One consumer on a rack with no partitions.
    verify_rack_assignment(
        assignor,
        topics,
        3,
        racks(2),
        racks(3),
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"],
        4,
    )


def test_rack_aware_assignment_with_non_equal_subscription():
    assignor = RangeAssignor()
    topics = {"t1": 6, "t2": 7, "t3": 2}
    all_topics = ["t1", "t2", "t3"]
    consumer_topics = [all_topics, all_topics, ["t1", "t3"]]

    verify_non_rack_aware_assignment(
        assignor,
        topics,
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"],
    )
    verify_rack_assignment(
        assignor,
        topics,
        1,
        racks(3),
        racks(3),
        consumer_topics,
        ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"],
        2,
    )
    verify_rack_assignment(
        assignor,
        topics,
        2,
        racks(3),
        racks(3),
        consumer_topics,
        ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"],
        0,
    )
    verify_rack_assignment(
        assignor,
        topics,
        3,
        racks(2),
        racks(3),
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"],
        2,
    )


def test_rack_aware_assignment_with_uniform_partitions():
    assignor = RangeAssignor()
    topics = {"t1": 5, "t2": 5, "t3": 5}
    all_topics = ["t1", "t2", "t3"]
    consumer_topics = [all_topics, all_topics, all_topics]
    non_rack_aware = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1",
        "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
        "t1-4, t2-4, t3-4",
    ]
    verify_non_rack_aware_assignment(assignor, topics, consumer_topics, non_rack_aware)
    # Co-partitioning is prioritised over rack alignment.
    verify_rack_assignment(assignor, topics, 1, racks(3), racks(3), consumer_topics, non_rack_aware, 10)
    verify_rack_assignment(assignor, topics, 2, racks(3), racks(3), consumer_topics, non_rack_aware, 5)
    verify_rack_assignment(assignor, topics, 3, racks(2), racks(3), consumer_topics, non_rack_aware, 3)


def test_rack_aware_assignment_with_uniform_partitions_non_equal_subscription():
    assignor = RangeAssignor()
    topics = {"t1": 5, "t2": 5, "t3": 5}
    all_topics = ["t1", "t2", "t3"]
    consumer_topics = [all_topics, all_topics, ["t1", "t3"]]
    verify_non_rack_aware_assignment(
        assignor,
        topics,
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"],
    )
    # Co-partitioning is prioritised over rack alignment for topics with equal subscriptions.
    verify_rack_assignment(
        assignor,
        topics,
        1,
        racks(3),
        racks(3),
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"],
        9,
    )
    verify_rack_assignment(
        assignor,
        topics,
        2,
        racks(3),
        racks(3),
        consumer_topics,
        ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"],
        0,
    )
    verify_rack_assignment(
        assignor,
        topics,
        3,
        racks(2),
        racks(3),
        consumer_topics,
        ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"],
        2,
    )


def test_rack_aware_assignment_with_co_partitioning():
    assignor = RangeAssignor()
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    consumer_topics = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    consumer_racks = [ALL_RACKS[0], ALL_RACKS[1], ALL_RACKS[1], ALL_RACKS[0]]
    non_rack_aware = [
        "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
        "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
        "t3-0, t4-0",
        "t3-1, t4-1",
    ]
    verify_rack_assignment(assignor, topics, 3, racks(2), consumer_racks, consumer_topics, non_rack_aware, -1)
    verify_rack_assignment(assignor, topics, 3, racks(2), consumer_racks, consumer_topics, non_rack_aware, -1)
    verify_rack_assignment(assignor, topics, 2, racks(2), consumer_racks, consumer_topics, non_rack_aware, 0)
    verify_rack_assignment(
        assignor,
        topics,
        1,
        racks(2),
        consumer_racks,
        consumer_topics,
        ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5", "t3-1, t4-1", "t3-0, t4-0"],
        0,
    )

    all_topics = ["t1", "t2", "t3", "t4"]
    consumer_topics = [all_topics, all_topics, all_topics, all_topics]
    non_rack_aware = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
        "t1-4, t2-4",
        "t1-5, t2-5",
    ]
    verify_rack_assignment(assignor, topics, 3, racks(2), consumer_racks, consumer_topics, non_rack_aware, -1)
    verify_rack_assignment(assignor, topics, 3, racks(2), consumer_racks, consumer_topics, non_rack_aware, -1)
    verify_rack_assignment(assignor, topics, 2, racks(2), consumer_racks, consumer_topics, non_rack_aware, 0)
    verify_rack_assignment(
        assignor,
        topics,
        1,
        racks(2),
        consumer_racks,
        consumer_topics,
        ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1", "t1-5, t2-5", "t1-4, t2-4"],
        0,
    )
    verify_rack_assignment(
        assignor,
        topics,
        1,
        racks(3),
        consumer_racks,
        consumer_topics,
        ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1", "t1-2, t2-2", "t1-5, t2-5"],
        6,
    )


def test_co_partitioned_assignment_with_same_subscription():
    assignor = RangeAssignor()
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
    topic_list = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]
    consumer_topics = [topic_list, topic_list, topic_list]
    consumer_racks = [ALL_RACKS[0], ALL_RACKS[1], ALL_RACKS[2]]
    non_rack_aware = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
    ]
    verify_rack_assignment(assignor, topics, 3, null_racks(3), consumer_racks, consumer_topics, non_rack_aware, -1)
    assignor.prefer_rack_aware_logic = True
    verify_rack_assignment(assignor, topics, 3, racks(3), consumer_racks, consumer_topics, non_rack_aware, 0)
    rack_aware = [
        "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
        "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3",
    ]
    verify_rack_assignment(assignor, topics, 2, racks(3), consumer_racks, consumer_topics, rack_aware, 0)


# --- the reference's examples and properties Kafka's suite does not state ------------------------------------


def test_javadoc_example():
    result = assign("range", {"t0": 3, "t1": 3}, {"C0": Member(["t0", "t1"]), "C1": Member(["t0", "t1"])})
    assert result == {"C0": [("t0", 0), ("t0", 1), ("t1", 0), ("t1", 1)], "C1": [("t0", 2), ("t1", 2)]}


def test_duplicate_topics_in_a_subscription_count_once():
    result = assign("range", {"t": 4}, {"a": Member(["t", "t"]), "b": Member(["t"])})
    assert result == {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]}


def test_equal_instance_ids_keep_the_leader_order():
    """Java's stable `Collections.sort` leaves members with equal instance ids in subscription-map order."""
    members = {"z": Member(["t"], instance_id="i"), "a": Member(["t"], instance_id="i")}
    assert assign("range", {"t": 2}, members) == {"z": [("t", 0)], "a": [("t", 1)]}


def test_consumer_rack_on_no_replica_is_skipped_by_the_co_partitioned_pass():
    """A co-partitioned group runs its rack pass even when its own topics would not need one; a consumer
    whose rack holds no replica then matches nothing there and only gets the classic leftovers."""
    topics = {"t1": 4, "t2": 4, "x": 3}
    members = {
        "c0": Member(["t1", "t2"], rack="z"),
        "c1": Member(["t1", "t2"], rack="a"),
        "c2": Member(["x"], rack="a"),
    }
    layout = {"t1": [["a"]] * 4, "t2": [["a"]] * 4, "x": [["a"], ["b"], ["a"]]}
    result = assign("range", topics, members, layout)
    # Plain range would give c0 t1/t2 partitions 0-1; the pre-pass gives 0-1 to c1 (on rack a) first.
    assert result["c1"] == [("t1", 0), ("t1", 1), ("t2", 0), ("t2", 1)]
    assert result["c0"] == [("t1", 2), ("t1", 3), ("t2", 2), ("t2", 3)]
    assert result["c2"] == [("x", 0), ("x", 1), ("x", 2)]


def _random_case(rng: random.Random):
    topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 6))}
    names = list(topics)
    rack_pool = ["a", "b", "c", "d"]
    members = {}
    for i in range(rng.randint(1, 7)):
        subs = rng.sample(names, rng.randint(0, len(names))) + (["gone"] if rng.random() < 0.2 else [])
        rack = rng.choice([None, *rack_pool[:3]]) if rng.random() < 0.8 else "d"
        instance = f"i{rng.randint(0, 9)}" if rng.random() < 0.3 else None
        members[f"m{rng.randint(0, 99)}-{i}"] = Member(subs, rack=rack, instance_id=instance)
    layout = {t: [rng.sample(rack_pool[:3], rng.randint(1, 2)) for _ in range(n)] for t, n in topics.items()}
    return topics, members, layout


@pytest.mark.parametrize("seed", range(40))
def test_rack_aware_keeps_per_topic_quotas_and_completeness(seed):
    """Rack awareness only changes which partitions go where: every subscribed partition is assigned once,
    to a subscriber, and per topic the member counts are plain Range's (though the q+1 may go elsewhere)."""
    rng = random.Random(seed)
    topics, members, layout = _random_case(rng)
    plain = assign("range", topics, members)
    for prefer in (False, True):
        result = run_assignor(RangeAssignor(prefer_rack_aware_logic=prefer), topics, members, layout)
        assert set(result) == set(members)
        seen = [p for parts in result.values() for p in parts]
        assert len(seen) == len(set(seen))
        subscribed = {t for m in members.values() for t in m.topics if t in topics}
        assert set(seen) == {(t, p) for t in subscribed for p in range(topics[t])}
        for mid, parts in result.items():
            assert all(t in members[mid].topics for t, _ in parts)
        for t in topics:

            def counts(assignment, t=t):
                return sorted(sum(1 for x, _ in parts if x == t) for parts in assignment.values())

            assert counts(result) == counts(plain)


# --- a literal, slow transliteration of Kafka's algorithm, to cross-check the fast one ----------------------


def kafka_range_literally(topics, members, layout, prefer):
    """RangeAssignor.assignPartitions step by step over Python objects, as the Java code walks them:
    `TopicAssignmentState` per topic, `assignWithRackMatching`, then `assignRanges` for every topic."""
    order = sorted(members, key=lambda m: (0, members[m].instance_id) if members[m].instance_id is not None else (1, m))
    consumer_racks = {m: members[m].rack for m in members if members[m].rack}
    states = []
    for topic, n in topics.items():
        subs = [m for m in order if topic in members[m].topics]
        if n == 0 or not subs:
            continue
        replica = layout.get(topic, [])
        racks_of = [{r for r in replica[p] if r is not None} if p < len(replica) else set() for p in range(n)]
        consumer_rack_set = {consumer_racks[m] for m in subs if m in consumer_racks}
        partition_racks = dict(enumerate(racks_of)) if consumer_rack_set else {}
        all_partition_racks = set().union(*partition_racks.values()) if partition_racks else set()
        if not consumer_rack_set or not consumer_rack_set & all_partition_racks:
            needs = False
        else:
            needs = prefer or not all(r == all_partition_racks for r in partition_racks.values())
        states.append({
            "topic": topic, "consumers": subs, "partition_racks": partition_racks, "needs": needs,
            "unassigned": list(range(n)), "assigned": dict.fromkeys(subs, 0), "q": n // len(subs),
            "extra": n % len(subs),
        })
    result = {m: [] for m in members}

    def max_assignable(s, c):
        return max(0, s["q"] + (1 if s["extra"] > 0 else 0) - s["assigned"][c])

    def give(s, c, parts):
        result[c].extend((s["topic"], p) for p in parts)
        s["assigned"][c] += len(parts)
        if s["assigned"][c] > s["q"]:
            s["extra"] -= 1
        s["unassigned"] = [p for p in s["unassigned"] if p not in parts]

    def racks_match(s, c, p):
        rack = consumer_racks.get(c)
        return rack is None or (p in s["partition_racks"] and rack in s["partition_racks"][p])

    def assign_ranges(s, may_assign):
        for c in s["consumers"]:
            if not s["unassigned"]:
                break
            parts = [p for p in s["unassigned"] if may_assign(s, c, p)][: max_assignable(s, c)]
            if parts:
                give(s, c, parts)

    if any(s["needs"] for s in states):
        groups: dict = {}
        for s in states:
            key = tuple((c, consumer_racks.get(c)) for c in s["consumers"])
            groups.setdefault(key, {}).setdefault(len(s["partition_racks"]), []).append(s)
        for by_count in groups.values():
            for count, group in by_count.items():
                if len(group) > 1:
                    remaining = list(group[0]["consumers"])
                    for p in range(count):
                        match = next((c for c in remaining if all(
                            racks_match(s, c, p) and max_assignable(s, c) > 0 for s in group)), None)
                        if match is not None:
                            for s in group:
                                give(s, match, [p])
                            if all(max_assignable(s, match) == 0 for s in group):
                                remaining.remove(match)
                                if not remaining:
                                    break
                elif group[0]["needs"]:
                    assign_ranges(group[0], racks_match)
    for s in states:
        assign_ranges(s, lambda s, c, p: True)
    return {m: sorted(parts) for m, parts in result.items()}


def _co_partition_heavy_case(rng: random.Random):
    """Few subscription profiles and few partition counts, so co-partitioned groups are common."""
    topics = {f"t{i}": rng.choice([2, 3, 4, 4, 6, 7]) for i in range(rng.randint(1, 7))}
    names = list(topics)
    profiles = [rng.sample(names, rng.randint(1, len(names))) for _ in range(rng.randint(1, 3))]
    members = {}
    for i in range(rng.randint(1, 7)):
        rack = rng.choice([None, "a", "b", "c", "a", "b", "c", "x", ""])
        instance = f"i{rng.randint(0, 5)}" if rng.random() < 0.25 else None
        members[f"m{rng.randint(0, 50)}-{i}"] = Member(rng.choice(profiles), rack=rack, instance_id=instance)
    layout = {}
    for t, n in topics.items():
        kind = rng.random()
        if kind < 0.15:
            continue  # no replica racks known for this topic
        entries = n if kind > 0.3 else rng.randint(0, n)  # may describe only the first partitions
        layout[t] = [
            rng.sample(["a", "b", "c"], rng.randint(1, 3)) + ([None] if rng.random() < 0.1 else [])
            for _ in range(entries)
        ]
    return topics, members, layout


@pytest.mark.parametrize("seed", range(300))
def test_matches_a_literal_transliteration_of_kafkas_algorithm(seed):
    rng = random.Random(seed)
    topics, members, layout = _co_partition_heavy_case(rng)
    for prefer in (False, True):
        expected = kafka_range_literally(topics, members, layout, prefer)
        actual = run_assignor(RangeAssignor(prefer_rack_aware_logic=prefer), topics, members, layout)
        assert actual == expected, (topics, members, layout, prefer)

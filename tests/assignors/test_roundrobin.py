"""Kafka's `RoundRobinAssignorTest` (clients), ported test by test. Kafka compares lists exactly; ours are
in assignment order too, since RoundRobin assigns in (topic name, partition) order."""

from __future__ import annotations

import random

import pytest
from kafka_helpers import members_in_hashmap_order, tp

from assignors import Member, assign

TOPIC, CONSUMER_ID = "topic", "consumer"
TOPIC1, TOPIC2 = "topic1", "topic2"


def rr(topics: dict[str, int], members: dict[str, Member]) -> dict[str, list[tuple[str, int]]]:
    return assign("roundrobin", topics, members_in_hashmap_order(members))


def check_static_assignment(topics, members) -> dict[str, list]:
    by_member = rr(topics, members)
    return {m.instance_id: by_member[mid] for mid, m in members.items() if m.instance_id is not None}


def test_one_consumer_no_topic():
    assert rr({}, {CONSUMER_ID: Member([])}) == {CONSUMER_ID: []}


def test_one_consumer_nonexistent_topic():
    assert rr({}, {CONSUMER_ID: Member([TOPIC])}) == {CONSUMER_ID: []}


def test_one_consumer_one_topic():
    assignment = rr({TOPIC: 3}, {CONSUMER_ID: Member([TOPIC])})
    assert assignment[CONSUMER_ID] == [tp(TOPIC, 0), tp(TOPIC, 1), tp(TOPIC, 2)]


def test_only_assigns_partitions_from_subscribed_topics():
    assignment = rr({TOPIC: 3, "other": 3}, {CONSUMER_ID: Member([TOPIC])})
    assert assignment[CONSUMER_ID] == [tp(TOPIC, 0), tp(TOPIC, 1), tp(TOPIC, 2)]


def test_one_consumer_multiple_topics():
    assignment = rr({TOPIC1: 1, TOPIC2: 2}, {CONSUMER_ID: Member([TOPIC1, TOPIC2])})
    assert assignment[CONSUMER_ID] == [tp(TOPIC1, 0), tp(TOPIC2, 0), tp(TOPIC2, 1)]


def test_two_consumers_one_topic_one_partition():
    assignment = rr({TOPIC: 1}, {"consumer1": Member([TOPIC]), "consumer2": Member([TOPIC])})
    assert assignment["consumer1"] == [tp(TOPIC, 0)]
    assert assignment["consumer2"] == []


def test_two_consumers_one_topic_two_partitions():
    assignment = rr({TOPIC: 2}, {"consumer1": Member([TOPIC]), "consumer2": Member([TOPIC])})
    assert assignment["consumer1"] == [tp(TOPIC, 0)]
    assert assignment["consumer2"] == [tp(TOPIC, 1)]


def test_multiple_consumers_mixed_topics():
    members = {
        "consumer1": Member([TOPIC1]),
        "consumer2": Member([TOPIC1, TOPIC2]),
        "consumer3": Member([TOPIC1]),
    }
    assignment = rr({TOPIC1: 3, TOPIC2: 2}, members)
    assert assignment["consumer1"] == [tp(TOPIC1, 0)]
    assert assignment["consumer2"] == [tp(TOPIC1, 1), tp(TOPIC2, 0), tp(TOPIC2, 1)]
    assert assignment["consumer3"] == [tp(TOPIC1, 2)]


def test_two_dynamic_consumers_two_topics_six_partitions():
    members = {"consumer1": Member([TOPIC1, TOPIC2]), "consumer2": Member([TOPIC1, TOPIC2])}
    assignment = rr({TOPIC1: 3, TOPIC2: 3}, members)
    assert assignment["consumer1"] == [tp(TOPIC1, 0), tp(TOPIC1, 2), tp(TOPIC2, 1)]
    assert assignment["consumer2"] == [tp(TOPIC1, 1), tp(TOPIC2, 0), tp(TOPIC2, 2)]


def test_two_static_consumers_two_topics_six_partitions():
    # consumer-a sorts before consumer-b, but static members compare by instance id.
    members = {
        "consumer-b": Member([TOPIC1, TOPIC2], instance_id="instance1"),
        "consumer-a": Member([TOPIC1, TOPIC2], instance_id="instance2"),
    }
    assignment = rr({TOPIC1: 3, TOPIC2: 3}, members)
    assert assignment["consumer-b"] == [tp(TOPIC1, 0), tp(TOPIC1, 2), tp(TOPIC2, 1)]
    assert assignment["consumer-a"] == [tp(TOPIC1, 1), tp(TOPIC2, 0), tp(TOPIC2, 2)]


def test_one_static_consumer_and_one_dynamic_consumer_two_topics_six_partitions():
    # The static member wins although its member id sorts last.
    members = {
        "consumer-b": Member([TOPIC1, TOPIC2], instance_id="instance1"),
        "consumer-a": Member([TOPIC1, TOPIC2]),
    }
    assignment = rr({TOPIC1: 3, TOPIC2: 3}, members)
    assert assignment["consumer-b"] == [tp(TOPIC1, 0), tp(TOPIC1, 2), tp(TOPIC2, 1)]
    assert assignment["consumer-a"] == [tp(TOPIC1, 1), tp(TOPIC2, 0), tp(TOPIC2, 2)]


def test_static_member_round_robin_assignment_persistent():
    topics = {TOPIC1: 3, TOPIC2: 3}
    members = {f"consumer{i}": Member([TOPIC1, TOPIC2], instance_id=f"instance{i}") for i in (1, 2, 3)}
    members["consumer4"] = Member([TOPIC1, TOPIC2])  # a dynamic member
    expected = {
        "consumer1": [tp(TOPIC1, 0), tp(TOPIC2, 1)],
        "consumer2": [tp(TOPIC1, 1), tp(TOPIC2, 2)],
        "consumer3": [tp(TOPIC1, 2)],
        "consumer4": [tp(TOPIC2, 0)],
    }
    assert rr(topics, members) == expected

    # Replace dynamic member 4 with a new dynamic member 5.
    del members["consumer4"]
    members["consumer5"] = Member([TOPIC1, TOPIC2])
    expected["consumer5"] = expected.pop("consumer4")
    assert rr(topics, members) == expected


def test_static_member_round_robin_assignment_persistent_after_member_id_changes():
    topics = {TOPIC1: 5, TOPIC2: 5}
    members = {f"consumer{i}": Member([TOPIC1, TOPIC2], instance_id=f"instance{i}") for i in (1, 2, 3)}
    expected = {
        "instance1": [tp(TOPIC1, 0), tp(TOPIC1, 3), tp(TOPIC2, 1), tp(TOPIC2, 4)],
        "instance2": [tp(TOPIC1, 1), tp(TOPIC1, 4), tp(TOPIC2, 2)],
        "instance3": [tp(TOPIC1, 2), tp(TOPIC2, 0), tp(TOPIC2, 3)],
    }
    static_assignment = check_static_assignment(topics, members)
    assert static_assignment == expected

    # Switch the member ids: the assignment by instance id stays the same.
    members["consumer4"] = members.pop("consumer3")
    members["consumer5"] = members.pop("consumer2")
    assert check_static_assignment(topics, members) == static_assignment


# --- the reference's examples and a brute-force cross-check --------------------------------------------------


def test_javadoc_examples():
    members = {"C0": Member(["t0", "t1"]), "C1": Member(["t0", "t1"])}
    assert assign("roundrobin", {"t0": 3, "t1": 3}, members) == {
        "C0": [("t0", 0), ("t0", 2), ("t1", 1)],
        "C1": [("t0", 1), ("t1", 0), ("t1", 2)],
    }
    members = {"C0": Member(["t0"]), "C1": Member(["t0", "t1"]), "C2": Member(["t0", "t1", "t2"])}
    assert assign("roundrobin", {"t0": 1, "t1": 2, "t2": 3}, members) == {
        "C0": [("t0", 0)],
        "C1": [("t1", 0)],
        "C2": [("t1", 1), ("t2", 0), ("t2", 1), ("t2", 2)],
    }


def test_topics_are_walked_in_java_string_order():
    """Kafka's TreeSet of topic names: "T" < "a" < "t10" < "t2", whatever the metadata order."""
    topics = {"t2": 1, "t10": 1, "a": 1, "T": 1}
    members = {"m1": Member(list(topics)), "m2": Member(list(topics))}
    assert assign("roundrobin", topics, members) == {
        "m1": [("T", 0), ("t10", 0)],
        "m2": [("a", 0), ("t2", 0)],
    }


def brute_force(topics: dict[str, int], members: dict[str, Member]) -> dict[str, list[tuple[str, int]]]:
    """Kafka's loop, literally: a cursor over the circular sorted member list."""
    ordered = sorted(
        members, key=lambda m: (0, members[m].instance_id) if members[m].instance_id is not None else (1, m)
    )
    out: dict[str, list] = {m: [] for m in members}
    subscribed = sorted({t for m in members.values() for t in m.topics if topics.get(t, 0) > 0})
    cursor = 0
    for t in subscribed:
        for p in range(topics[t]):
            while t not in members[ordered[cursor % len(ordered)]].topics:
                cursor += 1
            out[ordered[cursor % len(ordered)]].append((t, p))
            cursor += 1
    return out


@pytest.mark.parametrize("seed", range(50))
def test_matches_kafkas_loop_on_random_groups(seed):
    rng = random.Random(seed)
    topics = {f"t{rng.randint(0, 30)}": rng.randint(0, 9) for _ in range(rng.randint(1, 6))}
    names = [*topics, "no-metadata"]
    members = {
        f"c{rng.randint(0, 99)}": Member(
            rng.sample(names, rng.randint(0, len(names))),
            instance_id=f"i{rng.randint(0, 99)}" if rng.random() < 0.3 else None,
        )
        for _ in range(rng.randint(1, 8))
    }
    assert assign("roundrobin", topics, members) == brute_force(topics, members)

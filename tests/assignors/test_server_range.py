"""Port of group-coordinator `RangeAssignorTest` (the KAFKA-16944 rewrite: not sticky, static members
ranked by instance id). Kafka's topic Uuids there are random, so topic order does not matter; the
previous target assignment (`owned`) is passed but, as in Kafka, ignored."""

from __future__ import annotations

import random

import pytest
from kafka_helpers import grouped

from assignors import Member, assign


def run(topics: dict[str, int], members: dict[str, Member]) -> dict[str, dict[str, set[int]]]:
    return grouped(assign("server-range", topics, members))


def both(*topics: str) -> list[str]:
    return list(topics)


def test_one_member_no_topic():
    assert run({"topic1": 3}, {"A": Member(topics=[])}) == {"A": {}}


def test_one_member_subscribed_to_non_existent_topic():
    # Kafka throws for an unknown topic id; the coordinator drops names without metadata before calling
    # the assignor, and so do we.
    assert run({"topic1": 3}, {"A": Member(topics=["topic2"])}) == {"A": {}}


def test_first_assignment_two_members_two_topics_same_subscriptions():
    members = {m: Member(topics=both("topic1", "topic3")) for m in "AB"}
    assert run({"topic1": 3, "topic3": 2}, members) == {
        "A": {"topic1": {0, 1}, "topic3": {0}},
        "B": {"topic1": {2}, "topic3": {1}},
    }


def test_first_assignment_three_members_three_topics_different_subscriptions():
    members = {
        "A": Member(topics=["topic1", "topic2"]),
        "B": Member(topics=["topic3"]),
        "C": Member(topics=["topic2", "topic3"]),
    }
    assert run({"topic1": 3, "topic2": 3, "topic3": 2}, members) == {
        "A": {"topic1": {0, 1, 2}, "topic2": {0, 1}},
        "B": {"topic3": {0}},
        "C": {"topic2": {2}, "topic3": {1}},
    }


def test_first_assignment_num_members_greater_than_num_partitions():
    members = {m: Member(topics=["topic1", "topic3"]) for m in "ABC"}
    assert run({"topic1": 3, "topic3": 2}, members) == {
        "A": {"topic1": {0}, "topic3": {0}},
        "B": {"topic1": {1}, "topic3": {1}},
        "C": {"topic1": {2}},
    }


def test_static_membership():
    topics = {"topic1": 3}
    members = {
        "A": Member(topics=["topic1"], instance_id="instanceA"),
        "B": Member(topics=["topic1"], instance_id="instanceB"),
    }
    initial = assign("server-range", topics, members)
    del members["A"]
    members["memberA1"] = Member(topics=["topic1"], instance_id="instanceA")
    again = assign("server-range", topics, members)
    assert again["memberA1"] == initial["A"]
    assert again["B"] == initial["B"]


def test_mixed_static_membership():
    topics = {"topic1": 5}
    members = {
        "A": Member(topics=["topic1"], instance_id="instanceA"),
        "C": Member(topics=["topic1"], instance_id="instanceC"),
        "B": Member(topics=["topic1"]),
    }
    initial = assign("server-range", topics, members)
    del members["A"]
    members["memberA1"] = Member(topics=["topic1"], instance_id="instanceA")
    again = assign("server-range", topics, members)
    assert again["memberA1"] == initial["A"]
    assert again["B"] == initial["B"]
    assert again["C"] == initial["C"]


def test_reassignment_num_members_greater_than_num_partitions_when_one_member_added():
    members = {
        "A": Member(topics=["topic1", "topic2"], owned=[("topic1", 0), ("topic2", 0)]),
        "B": Member(topics=["topic1", "topic2"], owned=[("topic1", 1), ("topic2", 1)]),
        "C": Member(topics=["topic1", "topic2"]),
    }
    assert run({"topic1": 2, "topic2": 2}, members) == {
        "A": {"topic1": {0}, "topic2": {0}},
        "B": {"topic1": {1}, "topic2": {1}},
        "C": {},
    }


def test_reassignment_when_one_partition_added_for_two_members_two_topics():
    members = {
        "A": Member(topics=["topic1", "topic2"], owned=[("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1)]),
        "B": Member(topics=["topic1", "topic2"], owned=[("topic1", 2), ("topic2", 2)]),
    }
    assert run({"topic1": 4, "topic2": 4}, members) == {
        "A": {"topic1": {0, 1}, "topic2": {0, 1}},
        "B": {"topic1": {2, 3}, "topic2": {2, 3}},
    }


def test_reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics():
    members = {
        "A": Member(topics=["topic1", "topic2"], owned=[("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1)]),
        "B": Member(topics=["topic1", "topic2"], owned=[("topic1", 2), ("topic2", 2)]),
        "C": Member(topics=["topic1", "topic2"]),
    }
    assert run({"topic1": 3, "topic2": 3}, members) == {
        "A": {"topic1": {0}, "topic2": {0}},
        "B": {"topic1": {1}, "topic2": {1}},
        "C": {"topic1": {2}, "topic2": {2}},
    }


def test_reassignment_when_one_member_added_and_one_partition_after_initial_assignment_with_two_members_two_topics():
    members = {
        "A": Member(topics=["topic1", "topic2"], owned=[("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1)]),
        "B": Member(topics=["topic1", "topic2"], owned=[("topic1", 2), ("topic2", 2)]),
        "C": Member(topics=["topic1"]),
    }
    assert run({"topic1": 4, "topic2": 3}, members) == {
        "A": {"topic1": {0, 1}, "topic2": {0, 1}},
        "B": {"topic1": {2}, "topic2": {2}},
        "C": {"topic1": {3}},
    }


def test_reassignment_when_one_member_removed_after_initial_assignment_with_two_members_two_topics():
    members = {"B": Member(topics=["topic1", "topic2"], owned=[("topic1", 2), ("topic2", 2)])}
    assert run({"topic1": 3, "topic2": 3}, members) == {"B": {"topic1": {0, 1, 2}, "topic2": {0, 1, 2}}}


def test_reassignment_when_multiple_subscriptions_removed_after_initial_assignment_with_three_members_two_topics():
    members = {
        "A": Member(topics=["topic1"], owned=[("topic1", 0), ("topic1", 1), ("topic1", 2), ("topic2", 0)]),
        "B": Member(topics=["topic1", "topic2", "topic3"], owned=[("topic2", 1)]),
        "C": Member(topics=["topic2"], owned=[("topic2", 2), ("topic3", 0), ("topic3", 1)]),
    }
    assert run({"topic1": 3, "topic2": 3, "topic3": 2}, members) == {
        "A": {"topic1": {0, 1}},
        "B": {"topic1": {2}, "topic2": {0, 1}, "topic3": {0, 1}},
        "C": {"topic2": {2}},
    }


# --- our own checks ---------------------------------------------------------------------------------


def test_member_order_is_static_first_then_member_id():
    """Reference §0.3: [a(y), b(z), c(x)] ranks c, a, b; [a(-), b(y), c(x)] ranks c, b, a."""
    members = {
        "a": Member(topics=["t"], instance_id="y"),
        "b": Member(topics=["t"], instance_id="z"),
        "c": Member(topics=["t"], instance_id="x"),
    }
    assert assign("server-range", {"t": 3}, members) == {"a": [("t", 1)], "b": [("t", 2)], "c": [("t", 0)]}
    members = {
        "a": Member(topics=["t"]),
        "b": Member(topics=["t"], instance_id="y"),
        "c": Member(topics=["t"], instance_id="x"),
    }
    assert assign("server-range", {"t": 3}, members) == {"a": [("t", 2)], "b": [("t", 1)], "c": [("t", 0)]}


def test_member_ids_compare_as_java_strings():
    """Java's String.compareTo (UTF-16 code units) ranks U+1F600 (surrogates D83D DE00) before U+FF5E;
    Python's str order is the other way round."""
    members = {"\uff5e": Member(topics=["t"]), "\U0001f600": Member(topics=["t"])}
    assert assign("server-range", {"t": 2}, members) == {"\uff5e": [("t", 1)], "\U0001f600": [("t", 0)]}


def test_random_groups_match_a_per_topic_reference():
    rng = random.Random(9)
    for _ in range(60):
        topics = {f"t{i}": rng.randint(1, 15) for i in range(rng.randint(1, 5))}
        members = {}
        for i in range(rng.randint(1, 8)):
            iid = f"i{rng.randint(0, 20)}" if rng.random() < 0.4 else None
            members[f"m{rng.randint(0, 99)}-{i}"] = Member(
                topics=rng.sample(list(topics), rng.randint(0, len(topics))), instance_id=iid
            )
        ranked = sorted(members, key=lambda m: (0, members[m].instance_id) if members[m].instance_id else (1, m))
        expected: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
        for t, n in topics.items():
            subs = [m for m in ranked if t in members[m].topics]
            start = 0
            for r, m in enumerate(subs):
                size = n // len(subs) + (1 if r < n % len(subs) else 0)
                expected[m].extend((t, p) for p in range(start, start + size))
                start += size
        assert assign("server-range", topics, members) == {m: sorted(v) for m, v in expected.items()}


@pytest.mark.parametrize("strategy", ["uniform", "server-range", "metaq-default", "metaq-consistent-hash"])
def test_edge_cases_list_every_member(strategy):
    """No members, no topics, topics without metadata, members without subscriptions."""
    assert assign(strategy, {}, {}) == {}
    assert assign(strategy, {"t": 3}, {}) == {}
    assert assign(strategy, {}, {"a": Member(topics=["x"])}) == {"a": []}
    members = {"a": Member(topics=["t", "u"]), "b": Member(topics=[])}
    assert assign(strategy, {"t": 0, "u": 2}, members) == {"a": [("u", 0), ("u", 1)], "b": []}

"""Port of group-coordinator `UniformHomogeneousAssignmentBuilderTest` (2024 version, then named
`UniformHomogenousAssignmentBuilderTest`; its expectations match the builder at the reference commit).

Kafka's builder copies the first member's topic ids into a `HashSet<Uuid>` and lists unassigned
partitions in that set's order. For the test Uuids (T1-A4s3VTwiI5CTbEp6POw ...) Java's HashSet order
is topic2, topic4, topic3, topic1 (reference §6.2), so the metadata below is given in that order.
`mkOrderedAssignment` (a LinkedHashMap) maps to `owned` in the same order; `mkAssignment` (a HashMap)
to `owned` in HashSet order, which only matters where a member loses partitions.
"""

from __future__ import annotations

import random

from kafka_helpers import grouped

from assignors import Member, assign, build_spec
from assignors.uniform import UniformAssignor, subscription_is_homogeneous

HASHSET_ORDER = ("topic2", "topic4", "topic3", "topic1")


def metadata(**counts: int) -> dict[str, int]:
    """Topic metadata in Java's HashSet<Uuid> iteration order for the test Uuids."""
    return {t: counts[t] for t in HASHSET_ORDER if t in counts}


def owned(*parts: tuple[str, tuple[int, ...]]) -> list[tuple[str, int]]:
    return [(t, p) for t, ps in parts for p in ps]


def run(topics: dict[str, int], members: dict[str, Member]) -> dict[str, dict[str, set[int]]]:
    spec = build_spec(topics, members)
    assert subscription_is_homogeneous(spec)
    result = spec.to_result(UniformAssignor().assign(spec))
    check_validity_and_balance(members, result)
    return grouped(result)


def check_validity_and_balance(members: dict[str, Member], result: dict[str, list[tuple[str, int]]]) -> None:
    """Kafka's `checkValidityAndBalance` (reference §7.6): subscribed topics only, disjoint, sizes within 1."""
    names = list(result)
    for i, a in enumerate(names):
        assert {t for t, _ in result[a]} <= set(members[a].topics)
        for b in names[i + 1 :]:
            assert not set(result[a]) & set(result[b])
            assert abs(len(result[a]) - len(result[b])) <= 1


def test_one_member_no_topic_subscription():
    # Kafka returns {} (no member at all); our API lists the member with nothing.
    assert assign("uniform", {"topic1": 3}, {"A": Member(topics=[])}) == {"A": []}


def test_one_member_subscribed_to_nonexistent_topic():
    # Kafka throws for an unknown topic id, which the coordinator never passes: it drops subscribed
    # names without metadata first. Our API does the same, so there is nothing to assign.
    assert assign("uniform", {"topic1": 3}, {"A": Member(topics=["topic2"])}) == {"A": []}


def test_first_assignment_two_members_two_topics_no_member_racks():
    members = {"A": Member(topics=["topic1", "topic3"]), "B": Member(topics=["topic1", "topic3"])}
    assert run(metadata(topic1=3, topic3=2), members) == {
        "A": {"topic1": {0}, "topic3": {0, 1}},
        "B": {"topic1": {1, 2}},
    }


def test_first_assignment_num_members_greater_than_total_num_partitions():
    members = {m: Member(topics=["topic3"]) for m in "ABC"}
    assert run(metadata(topic3=2), members) == {"A": {"topic3": {0}}, "B": {"topic3": {1}}, "C": {}}


def test_validity_and_balance_for_large_sample_set():
    topics = {f"topic-{i}": 3 for i in range(1, 100)}
    members = {f"member{i}": Member(topics=list(topics)) for i in range(1, 50)}
    run(topics, dict(sorted(members.items())))


def test_reassignment_for_two_members_two_topics_given_unbalanced_prev_assignment():
    members = {
        "A": Member(topics=["topic1", "topic2"], owned=owned(("topic1", (0, 1)), ("topic2", (0, 1)))),
        "B": Member(topics=["topic1", "topic2"], owned=owned(("topic1", (2,)), ("topic2", (2,)))),
    }
    assert run(metadata(topic1=3, topic2=3), members) == {
        "A": {"topic1": {0, 1}, "topic2": {0}},
        "B": {"topic1": {2}, "topic2": {1, 2}},
    }


def test_reassignment_when_partitions_are_added_for_two_members_two_topics():
    members = {
        "A": Member(topics=["topic1", "topic2"], owned=owned(("topic1", (0, 2)), ("topic2", (0,)))),
        "B": Member(topics=["topic1", "topic2"], owned=owned(("topic1", (1,)), ("topic2", (1, 2)))),
    }
    assert run(metadata(topic1=6, topic2=5), members) == {
        "A": {"topic1": {0, 2, 3}, "topic2": {0, 3, 4}},
        "B": {"topic1": {1, 4, 5}, "topic2": {1, 2}},
    }


def test_reassignment_when_one_member_added_after_initial_assignment_with_two_members_two_topics():
    # Kafka's members map is a HashMap: {A, B, C} iterates A, B, C.
    members = {
        "A": Member(topics=["topic1", "topic2"], owned=owned(("topic1", (0, 2)), ("topic2", (0,)))),
        "B": Member(topics=["topic1", "topic2"], owned=owned(("topic1", (1,)), ("topic2", (1, 2)))),
        "C": Member(topics=["topic1", "topic2"]),
    }
    assert run(metadata(topic1=3, topic2=3), members) == {
        "A": {"topic1": {0, 2}},
        "B": {"topic1": {1}, "topic2": {1}},
        "C": {"topic2": {0, 2}},
    }


def test_reassignment_when_one_member_removed_after_initial_assignment_with_three_members_two_topics():
    # Needs topic2 before topic1 in the HashSet order: t2-2 goes to A, t1-2 to B.
    members = {
        "A": Member(topics=["topic1", "topic2"], owned=owned(("topic2", (0,)), ("topic1", (0,)))),
        "B": Member(topics=["topic1", "topic2"], owned=owned(("topic2", (1,)), ("topic1", (1,)))),
    }
    assert run(metadata(topic1=3, topic2=3), members) == {
        "A": {"topic1": {0}, "topic2": {0, 2}},
        "B": {"topic1": {1, 2}, "topic2": {1}},
    }


def test_reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics():
    members = {
        "A": Member(topics=["topic2"], owned=owned(("topic2", (0,)), ("topic1", (0,)))),
        "B": Member(topics=["topic2"], owned=owned(("topic2", (1,)), ("topic1", (1,)))),
    }
    assert run(metadata(topic1=2, topic2=2), members) == {"A": {"topic2": {0}}, "B": {"topic2": {1}}}


# --- our own checks ---------------------------------------------------------------------------------


def test_extra_partitions_go_to_the_first_members_in_order():
    """Quota + 1 for the first T % N members walked, whatever they held before."""
    members = {m: Member(topics=["t"]) for m in ("z", "y", "x")}
    result = assign("uniform", {"t": 7}, members)
    assert [len(result[m]) for m in ("z", "y", "x")] == [3, 2, 2]
    assert result["z"] == [("t", 0), ("t", 1), ("t", 2)]


def test_owned_order_decides_what_a_member_keeps():
    """The member's previous assignment is walked in `owned` order, so the tail beyond the quota moves."""
    members = {"a": Member(topics=["t"], owned=[("t", 3), ("t", 0), ("t", 2), ("t", 1)]), "b": Member(topics=["t"])}
    result = assign("uniform", {"t": 4}, members)
    assert result == {"a": [("t", 0), ("t", 3)], "b": [("t", 1), ("t", 2)]}


def test_names_without_metadata_decide_the_subscription_type():
    """The coordinator computes HOMOGENEOUS from subscribed names, including names without metadata."""
    members = {"a": Member(topics=["t", "ghost"]), "b": Member(topics=["t"])}
    assert not subscription_is_homogeneous(build_spec({"t": 2}, members))
    assert assign("uniform", {"t": 2}, members) == {"a": [("t", 0)], "b": [("t", 1)]}


def test_repeated_claims_are_kept_once():
    """Two members claiming one partition (impossible in a real target assignment): the first keeps it."""
    members = {"a": Member(topics=["t"], owned=[("t", 0), ("t", 1)]), "b": Member(topics=["t"], owned=[("t", 1)])}
    assert assign("uniform", {"t": 4}, members) == {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]}


def test_random_groups_are_balanced_complete_and_sticky():
    rng = random.Random(3)
    for _ in range(50):
        topics = {f"t{i}": rng.randint(1, 20) for i in range(rng.randint(1, 5))}
        subs = rng.sample(list(topics), rng.randint(1, len(topics)))
        all_parts = [(t, p) for t in subs for p in range(topics[t])]
        members = {}
        for i in range(rng.randint(1, 12)):
            mine = rng.sample(all_parts, rng.randint(0, len(all_parts) // 2))
            members[f"m{i}"] = Member(topics=subs, owned=mine)
        result = assign("uniform", topics, members)
        check_validity_and_balance(members, result)
        assert sorted(tp for parts in result.values() for tp in parts) == sorted(all_parts)
        # A rebalance with nothing changed keeps everything.
        again = assign("uniform", topics, {m: Member(topics=subs, owned=result[m]) for m in members})
        assert again == result

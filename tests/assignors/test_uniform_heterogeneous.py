"""Port of group-coordinator `UniformHeterogeneousAssignmentBuilderTest` (the KAFKA-17710 builder).

Kafka's test GroupSpec returns members sorted by id, so members are passed in sorted order. The topic
ids T1-A4s3VTwiI5CTbEp6POw .. T4-Tw9fVTLCz5HbPp6YQsa compare (Uuid.compareTo) topic1 < topic2 < topic3 <
topic4, the metadata order used here, which stands for Uuid order in the builder's last tie-break.
Kafka's previous assignment (`mkAssignment`) maps to each member's `owned`.
"""

from __future__ import annotations

import random

from kafka_helpers import grouped

from assignors import Member, assign, build_spec
from assignors.uniform import UniformAssignor, _water_fill, subscription_is_homogeneous

TOPICS = ("topic1", "topic2", "topic3", "topic4")


def metadata(**counts: int) -> dict[str, int]:
    """Topic metadata in Uuid order (topic1 < topic2 < topic3 < topic4)."""
    return {t: counts[t] for t in TOPICS if t in counts}


def owned(**parts: tuple[int, ...]) -> list[tuple[str, int]]:
    return [(t, p) for t, ps in parts.items() for p in ps]


def run(topics: dict[str, int], members: dict[str, Member]) -> dict[str, dict[str, set[int]]]:
    spec = build_spec(topics, members)
    assert not subscription_is_homogeneous(spec), "these tests exercise the heterogeneous builder"
    result = spec.to_result(UniformAssignor().assign(spec))
    return grouped(result)


def test_two_members_no_topic_subscription():
    # Kafka returns {} (no member); our API lists every member, each with nothing.
    members = {"A": Member(topics=[]), "B": Member(topics=[])}
    assert assign("uniform", {"topic1": 3}, members) == {"A": [], "B": []}


def test_two_members_subscribed_to_nonexistent_topics():
    # Kafka throws for unknown topic ids; the coordinator never passes them (it drops names without
    # metadata), and our API does the same: nothing to assign.
    members = {"A": Member(topics=["topic3"]), "B": Member(topics=["topic2"])}
    assert assign("uniform", {"topic1": 3}, members) == {"A": [], "B": []}


def test_first_assignment_two_members_two_topics():
    members = {"A": Member(topics=["topic1", "topic3"]), "B": Member(topics=["topic3"])}
    assert run(metadata(topic1=3, topic3=6), members) == {
        "A": {"topic1": {0, 1, 2}, "topic3": {4}},
        "B": {"topic3": {0, 1, 2, 3, 5}},
    }


def test_first_assignment_num_members_greater_than_total_num_partitions():
    members = {"A": Member(topics=["topic3"]), "B": Member(topics=["topic3"]), "C": Member(topics=["topic1"])}
    assert run(metadata(topic3=1, topic1=2), members) == {
        "A": {"topic3": {0}},
        "B": {},
        "C": {"topic1": {0, 1}},
    }


def test_reassignment_for_two_members_three_topics_given_unbalanced_prev_assignment():
    members = {
        "A": Member(topics=["topic1"], owned=owned(topic1=(0, 1, 2))),
        "B": Member(topics=["topic1", "topic2"], owned=owned(topic1=(3,), topic2=(0,))),
        "C": Member(
            topics=["topic1", "topic2", "topic3"],
            owned=owned(topic1=(4, 5), topic2=(1, 2, 3), topic3=(0, 1, 2, 3)),
        ),
    }
    assert run(metadata(topic1=6, topic2=4, topic3=4), members) == {
        "A": {"topic1": {0, 1, 2, 5}},
        "B": {"topic1": {3}, "topic2": {0, 1, 2, 3}},
        "C": {"topic1": {4}, "topic3": {0, 1, 2, 3}},
    }


def test_reassignment_when_partitions_are_added_for_two_members():
    members = {
        "A": Member(topics=["topic1", "topic3"], owned=owned(topic1=(0, 1, 2, 3), topic3=(0, 1))),
        "B": Member(topics=["topic1", "topic2", "topic3", "topic4"], owned=owned(topic2=(0, 1, 2), topic4=(0, 1, 2))),
    }
    assert run(metadata(topic1=6, topic2=5, topic3=3, topic4=3), members) == {
        "A": {"topic1": {0, 1, 2, 3, 4, 5}, "topic3": {0, 1, 2}},
        "B": {"topic2": {0, 1, 2, 3, 4}, "topic4": {0, 1, 2}},
    }


def test_reassignment_when_one_member_added_and_partitions_added_two_members_two_topics():
    members = {
        "A": Member(topics=["topic1"], owned=owned(topic1=(0, 2), topic2=(0,))),
        "B": Member(topics=["topic1", "topic2"], owned=owned(topic1=(1,), topic2=(1, 2))),
        "C": Member(topics=["topic1", "topic2"]),
    }
    assert run(metadata(topic1=6, topic2=7), members) == {
        "A": {"topic1": {0, 2, 3, 4, 5}},
        "B": {"topic1": {1}, "topic2": {1, 2, 6}},
        "C": {"topic2": {0, 3, 4, 5}},
    }


def test_reassignment_when_one_member_removed_after_initial_assignment_with_three_members_three_topics():
    members = {
        "A": Member(topics=["topic1", "topic3"], owned=owned(topic1=(0, 1, 2), topic3=(0, 1))),
        "B": Member(topics=["topic2"], owned=owned(topic2=(3, 4, 5, 6))),
    }
    assert run(metadata(topic1=3, topic2=8, topic3=3), members) == {
        "A": {"topic1": {0, 1, 2}, "topic3": {0, 1, 2}},
        "B": {"topic2": {0, 1, 2, 3, 4, 5, 6, 7}},
    }


def test_reassignment_when_one_subscription_removed_after_initial_assignment_with_two_members_two_topics():
    members = {
        "A": Member(topics=["topic1"], owned=owned(topic1=(0, 2), topic2=(1, 3))),
        "B": Member(topics=["topic1", "topic2"], owned=owned(topic1=(1,), topic2=(0, 2, 4))),
    }
    assert run(metadata(topic1=3, topic2=5), members) == {
        "A": {"topic1": {0, 1, 2}},
        "B": {"topic2": {0, 1, 2, 3, 4}},
    }


def test_reassignment_when_topic_partitions_run_out_and_members_have_no_partitions():
    members = {
        "A": Member(topics=["topic1", "topic2", "topic3"], owned=owned(topic1=(0, 1), topic2=(0, 1), topic3=(0, 1))),
        "B": Member(topics=["topic1", "topic2", "topic3"]),
    }
    # Same subscriptions, but Kafka's test forces HETEROGENEOUS: call the builder directly.
    from assignors.uniform import _assign_heterogeneous

    spec = build_spec(metadata(topic1=2, topic2=2, topic3=2), members)
    result = spec.to_result(_assign_heterogeneous(spec))
    assert result == {
        "A": [("topic2", 0), ("topic3", 0), ("topic3", 1)],
        "B": [("topic1", 0), ("topic1", 1), ("topic2", 1)],
    }


def test_first_assignment_with_two_members_including_one_without_subscriptions():
    members = {"A": Member(topics=["topic1"]), "B": Member(topics=[])}
    assert run(metadata(topic1=3), members) == {"A": {"topic1": {0, 1, 2}}, "B": {}}


# --- our own checks ---------------------------------------------------------------------------------


def test_water_fill_matches_one_partition_at_a_time():
    """The vectorised water-filling equals `nextLeastLoadedMember` called repeatedly."""
    rng = random.Random(7)
    for _ in range(300):
        sizes = sorted(rng.randint(0, 6) for _ in range(rng.randint(1, 6)))
        n = rng.randint(1, 30)
        live, expected = list(sizes), []
        level, end, nxt = sizes[0] - 1, 0, 0
        for _ in range(n):
            if nxt >= end:
                level += 1
                while end < len(live) and live[end] == level:
                    end += 1
                nxt = 0
            expected.append(nxt)
            live[nxt] += 1
            nxt += 1
        assert _water_fill(sizes, n).tolist() == expected


def test_random_groups_are_valid_complete_and_sticky():
    """Every subscribed partition assigned once, only to subscribers; a rerun on its own output is stable."""
    rng = random.Random(11)
    for _ in range(40):
        topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(2, 6))}
        names = list(topics)
        members = {
            f"m{i}": Member(topics=rng.sample(names, rng.randint(1, len(names)))) for i in range(rng.randint(2, 9))
        }
        result = assign("uniform", topics, members)
        seen = [tp for parts in result.values() for tp in parts]
        assert len(seen) == len(set(seen))
        subscribed = {t for m in members.values() for t in m.topics}
        assert set(seen) == {(t, p) for t in subscribed for p in range(topics[t])}
        for mid, parts in result.items():
            assert {t for t, _ in parts} <= set(members[mid].topics)
        again = assign("uniform", topics, {m: Member(topics=v.topics, owned=result[m]) for m, v in members.items()})
        assert again == result


def test_groups_with_identical_subscriptions_are_perfectly_balanced():
    """Kafka's documented guarantee: when all subscribers of a topic have the same subscriptions, the
    balancing phase makes them differ by at most one partition (even from a lopsided previous assignment)."""
    rng = random.Random(5)
    for _ in range(20):
        topics = {f"t{i}": rng.randint(1, 30) for i in range(4)}
        groups = [["t0", "t1"], ["t2"], ["t3"]]
        members = {}
        for i in range(rng.randint(3, 10)):
            subs = groups[i % 3]
            lopsided = [(t, p) for t in subs for p in range(topics[t]) if i < 3 and rng.random() < 0.8]
            members[f"m{i}"] = Member(topics=subs, owned=lopsided)
        result = assign("uniform", topics, members)
        for subs in groups:
            sizes = [len(result[m]) for m, v in members.items() if list(v.topics) == subs]
            assert max(sizes) - min(sizes) <= 1, (subs, sizes)

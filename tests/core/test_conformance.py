"""Conformance records (docs/conformance.md) for `generation` events whose Java results are known.

Every case below is an input of one of Kafka's own assignor tests (apache/kafka,
clients/src/test/java/org/apache/kafka/clients/consumer/internals/: RangeAssignorTest,
RoundRobinAssignorTest, AbstractStickyAssignorTest via StickyAssignorTest / CooperativeStickyAssignorTest)
written as a `generation` event whose members carry, as `assigned`, the assignment Kafka's test asserts.
Members appear in the order the Java test puts them into its HashMap (the record's order stands for the
leader's insertion order). A record must say `conforms: true`; the same record with one partition
handed to another member must say `conforms: false` and name exactly that partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from streaming.core.conformance import conformance_record

TOPIC, TOPIC1, TOPIC2 = "topic", "topic1", "topic2"


def by_topic(pairs: list[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in pairs:
        out.setdefault(t, []).append(p)
    return out


@dataclass
class M:
    topics: list[str]
    assigned: list[tuple[str, int]]
    owned: list[tuple[str, int]] = field(default_factory=list)
    generation: int | None = None
    rack: str | None = None
    instance_id: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topics": self.topics, "assigned": by_topic(self.assigned)}
        if self.owned:
            out["owned"] = by_topic(self.owned)
        if self.generation is not None:
            out["owned_generation"] = self.generation
        if self.rack is not None:
            out["rack"] = self.rack
        if self.instance_id is not None:
            out["instance_id"] = self.instance_id
        return out


@dataclass
class Case:
    test: str  # Kafka's test method
    protocol: str
    topics: dict[str, int]
    members: dict[str, M]  # Java's assertion as `assigned`
    partition_racks: dict[str, list[list[str]]] | None = None

    def event(self) -> dict[str, Any]:
        return {
            "group": "g", "type": "generation", "generation": 7, "protocol_type": "consumer",
            "protocol": self.protocol, "ts": 1732200000000,
            "members": {mid: m.as_json() for mid, m in self.members.items()},
            "source": {"file": "log.jsonl", "line": 3},
        }


def tps(topic: str, *parts: int) -> list[tuple[str, int]]:
    return [(topic, p) for p in parts]


def _rack_layout(topics: dict[str, int], brokers: list[str]) -> dict[str, list[list[str]]]:
    """`verifyRackAssignment`'s replicas with replication 1: partition i of the k-th partition overall on
    broker k % brokers (each topic starts where the previous one ended)."""
    out, k = {}, 0
    for topic, n in topics.items():
        out[topic] = [[brokers[(k + i) % len(brokers)]] for i in range(n)]
        k += n
    return out


BOTH = [TOPIC1, TOPIC2]
RACK_TOPICS = {"t1": 6, "t2": 7, "t3": 2}

CASES = [
    # RangeAssignorTest
    Case("testMultipleConsumersMixedTopics", "range", {TOPIC1: 3, TOPIC2: 2}, {
        "consumer1": M([TOPIC1], tps(TOPIC1, 0)),
        "consumer2": M(BOTH, tps(TOPIC1, 1) + tps(TOPIC2, 0, 1)),
        "consumer3": M([TOPIC1], tps(TOPIC1, 2)),
    }),
    Case("testTwoConsumersTwoTopicsSixPartitions", "range", {TOPIC1: 3, TOPIC2: 3}, {
        "consumer1": M(BOTH, tps(TOPIC1, 0, 1) + tps(TOPIC2, 0, 1)),
        "consumer2": M(BOTH, tps(TOPIC1, 2) + tps(TOPIC2, 2)),
    }),
    Case("testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions", "range", {TOPIC1: 3, TOPIC2: 3}, {
        "consumer-b": M(BOTH, tps(TOPIC1, 0, 1) + tps(TOPIC2, 0, 1), instance_id="instance1"),
        "consumer-a": M(BOTH, tps(TOPIC1, 2) + tps(TOPIC2, 2)),
    }),
    Case("testStaticMemberRangeAssignmentPersistent (consumer5 replaces consumer4)", "range",
         {TOPIC1: 5, TOPIC2: 4}, {
             "consumer1": M(BOTH, tps(TOPIC1, 0, 1) + tps(TOPIC2, 0), instance_id="instance1"),
             "consumer2": M(BOTH, tps(TOPIC1, 2) + tps(TOPIC2, 1), instance_id="instance2"),
             "consumer3": M(BOTH, tps(TOPIC1, 3) + tps(TOPIC2, 2), instance_id="instance3"),
             "consumer5": M(BOTH, tps(TOPIC1, 4) + tps(TOPIC2, 3)),
         }),
    Case("testRackAwareAssignmentWithUniformSubscription (replication 1)", "range", RACK_TOPICS, {
        "consumer0": M(["t1", "t2", "t3"], tps("t1", 0, 3) + tps("t2", 0, 3, 6), rack="a"),
        "consumer1": M(["t1", "t2", "t3"], tps("t1", 1, 4) + tps("t2", 1, 4) + tps("t3", 0), rack="b"),
        "consumer2": M(["t1", "t2", "t3"], tps("t1", 2, 5) + tps("t2", 2, 5) + tps("t3", 1), rack="c"),
    }, _rack_layout(RACK_TOPICS, ["a", "b", "c"])),
    # RoundRobinAssignorTest
    Case("testMultipleConsumersMixedTopics", "roundrobin", {TOPIC1: 3, TOPIC2: 2}, {
        "consumer1": M([TOPIC1], tps(TOPIC1, 0)),
        "consumer2": M(BOTH, tps(TOPIC1, 1) + tps(TOPIC2, 0, 1)),
        "consumer3": M([TOPIC1], tps(TOPIC1, 2)),
    }),
    Case("testTwoDynamicConsumersTwoTopicsSixPartitions", "roundrobin", {TOPIC1: 3, TOPIC2: 3}, {
        "consumer1": M(BOTH, tps(TOPIC1, 0, 2) + tps(TOPIC2, 1)),
        "consumer2": M(BOTH, tps(TOPIC1, 1) + tps(TOPIC2, 0, 2)),
    }),
    Case("testStaticMemberRoundRobinAssignmentPersistent", "roundrobin", {TOPIC1: 3, TOPIC2: 3}, {
        "consumer1": M(BOTH, tps(TOPIC1, 0) + tps(TOPIC2, 1), instance_id="instance1"),
        "consumer2": M(BOTH, tps(TOPIC1, 1) + tps(TOPIC2, 2), instance_id="instance2"),
        "consumer3": M(BOTH, tps(TOPIC1, 2), instance_id="instance3"),
        "consumer4": M(BOTH, tps(TOPIC2, 0)),
    }),
    # AbstractStickyAssignorTest, eager (StickyAssignorTest) and cooperative first round
    # (CooperativeStickyAssignorTest: a partition changing owner is withheld).
    Case("testAddRemoveConsumerOneTopic (consumer2 joins)", "sticky", {TOPIC: 3}, {
        "consumer1": M([TOPIC], tps(TOPIC, 0, 1), tps(TOPIC, 0, 1, 2), 1),
        "consumer2": M([TOPIC], tps(TOPIC, 2), [], 1),
    }),
    Case("testAddRemoveConsumerOneTopic (consumer2 joins)", "cooperative-sticky", {TOPIC: 3}, {
        "consumer1": M([TOPIC], tps(TOPIC, 0, 1), tps(TOPIC, 0, 1, 2), 1),
        "consumer2": M([TOPIC], [], [], 1),
    }),
    Case("testConsumerOwningMinQuotaExpectedMaxQuota", "sticky", {TOPIC1: 2, TOPIC2: 3}, {
        "consumer1": M(BOTH, tps(TOPIC1, 0) + tps(TOPIC2, 0, 1), tps(TOPIC1, 0) + tps(TOPIC2, 1), 1),
        "consumer2": M(BOTH, tps(TOPIC1, 1) + tps(TOPIC2, 2), tps(TOPIC1, 1) + tps(TOPIC2, 2), 1),
    }),
    # The HashMap tie-break: consumer1 and consumer2 both own maxQuota partitions, only one may keep
    # them; Java visits consumer3, consumer2, consumer1, so consumer2 keeps both.
    Case("testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers", "sticky", {TOPIC1: 2, TOPIC2: 2}, {
        "consumer1": M(BOTH, tps(TOPIC1, 0), tps(TOPIC1, 0) + tps(TOPIC2, 0), 1),
        "consumer2": M(BOTH, tps(TOPIC1, 1) + tps(TOPIC2, 1), tps(TOPIC1, 1) + tps(TOPIC2, 1), 1),
        "consumer3": M(BOTH, tps(TOPIC2, 0), [], 1),
    }),
    Case("testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers", "cooperative-sticky",
         {TOPIC1: 2, TOPIC2: 2}, {
             "consumer1": M(BOTH, tps(TOPIC1, 0), tps(TOPIC1, 0) + tps(TOPIC2, 0), 1),
             "consumer2": M(BOTH, tps(TOPIC1, 1) + tps(TOPIC2, 1), tps(TOPIC1, 1) + tps(TOPIC2, 1), 1),
             "consumer3": M(BOTH, [], [], 1),
         }),
    Case("testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration"
         "WithEqualPartitionsPerConsumer", "sticky", {TOPIC: 3}, {
             "consumer1": M([TOPIC], tps(TOPIC, 1), tps(TOPIC, 0, 1), 1),
             "consumer2": M([TOPIC], tps(TOPIC, 2), tps(TOPIC, 0, 2), 1),
             "consumer3": M([TOPIC], tps(TOPIC, 0), [], 1),
         }),
    Case("testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration"
         "WithUnequalPartitionsPerConsumer", "cooperative-sticky", {TOPIC: 4}, {
             "consumer1": M([TOPIC], tps(TOPIC, 1, 3), tps(TOPIC, 0, 1), 1),
             "consumer2": M([TOPIC], tps(TOPIC, 2), tps(TOPIC, 0, 2), 1),
             "consumer3": M([TOPIC], [], [], 1),
         }),
    Case("testOwnedPartitionsAreInvalidatedForConsumerWithMultipleGeneration", "sticky", {TOPIC: 3, TOPIC2: 3}, {
        "consumer1": M([TOPIC, TOPIC2], tps(TOPIC, 0, 1) + tps(TOPIC2, 1), tps(TOPIC, 0) + tps(TOPIC2, 1)
                       + tps(TOPIC, 1), 10),
        "consumer2": M([TOPIC, TOPIC2], tps(TOPIC, 2) + tps(TOPIC2, 0, 2), tps(TOPIC, 0) + tps(TOPIC2, 1, 2), 8),
    }),
]


def _id(case: Case) -> str:
    return f"{case.protocol}:{case.test}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_kafkas_result_conforms(case: Case) -> None:
    record = conformance_record(case.event(), case.topics, case.partition_racks)
    assert record is not None
    assert record["conforms"] is True, record["differences"]
    assert record["differences"] == {}
    assert record["observed_moves"] == record["expected_moves"]
    assert 0 <= record["min_moves"] <= record["observed_moves"]
    assert (record["group"], record["generation"], record["protocol"], record["ts"], record["source"]) == (
        "g", 7, case.protocol, 1732200000000, {"file": "log.jsonl", "line": 3})


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_one_partition_handed_elsewhere_is_named(case: Case) -> None:
    """Move the giver's first assigned partition to the next member: exactly that partition differs."""
    ids = list(case.members)
    giver = next(mid for mid in ids if case.members[mid].assigned)
    taker = ids[(ids.index(giver) + 1) % len(ids)]
    moved = case.members[giver].assigned[0]
    event = case.event()
    members = event["members"]
    members[giver]["assigned"] = by_topic(case.members[giver].assigned[1:])
    members[taker]["assigned"] = by_topic(sorted([*case.members[taker].assigned, moved]))
    record = conformance_record(event, case.topics, case.partition_racks)
    assert record is not None and record["conforms"] is False
    assert record["differences"] == {
        giver: {"observed_only": {}, "expected_only": {moved[0]: [moved[1]]}},
        taker: {"observed_only": {moved[0]: [moved[1]]}, "expected_only": {}},
    }


COLLIDING = ("c-AaAa", "c-BBBB")  # equal Java String.hashCode: one HashMap bucket, iterated in insertion order


@pytest.mark.parametrize("first", [0, 1])
def test_sticky_tie_break_follows_the_leaders_insertion_order(first: int) -> None:
    """testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers with the two maxQuota owners in one HashMap
    bucket: Java's iteration order is then their insertion order (the record's order), and the first one
    visited keeps its two partitions, as consumer2 does in Kafka's test."""
    keeper, giver = COLLIDING[first], COLLIDING[1 - first]
    owned = {keeper: tps(TOPIC1, 1) + tps(TOPIC2, 1), giver: tps(TOPIC1, 0) + tps(TOPIC2, 0)}
    members = {
        keeper: M(BOTH, owned[keeper], owned[keeper], 1),
        giver: M(BOTH, tps(TOPIC1, 0), owned[giver], 1),
        "consumer3": M(BOTH, tps(TOPIC2, 0), [], 1),
    }
    case = Case("tie-break", "sticky", {TOPIC1: 2, TOPIC2: 2}, members)
    record = conformance_record(case.event(), case.topics)
    assert record is not None and record["conforms"] is True, record["differences"]
    # The other insertion order would make the giver keep its pair: the same observation differs.
    swapped = case.event()
    swapped["members"] = {mid: swapped["members"][mid] for mid in (giver, keeper, "consumer3")}
    record = conformance_record(swapped, case.topics)
    assert record is not None and record["conforms"] is False
    assert set(record["differences"]) == {keeper, giver, "consumer3"}


def _two_members(assigned1: list[int], assigned2: list[int], **extra: Any) -> dict[str, Any]:
    return {
        "group": "orders-app", "type": "generation", "generation": 12, "protocol": "cooperative-sticky",
        "members": {
            "c-1": {"topics": ["t"], "owned": {"t": [0, 1]}, "owned_generation": 11, "assigned": {"t": assigned1}},
            "c-2": {"topics": ["t"], "owned": {"t": [2]}, "owned_generation": 11, "assigned": {"t": assigned2}},
        },
        **extra,
    }


def test_moves_are_counted_against_the_previous_owners() -> None:
    """Observed: c-1 gave t-1 to c-2 (1 move); Kafka keeps everything (0 moves); with the observed loads
    (1, 2) c-1 can keep one of its two, c-2 its one: at least one move."""
    record = conformance_record(_two_members([0], [1, 2]), {"t": 3})
    assert record == {
        "group": "orders-app", "generation": 12, "protocol": "cooperative-sticky", "conforms": False,
        "differences": {"c-1": {"observed_only": {}, "expected_only": {"t": [1]}},
                        "c-2": {"observed_only": {"t": [1]}, "expected_only": {}}},
        "observed_moves": 1, "expected_moves": 0, "min_moves": 1, "ts": None, "source": None,
    }


def test_withheld_partitions_count_as_moved() -> None:
    """A third member joins: Kafka's cooperative first round takes t-1 from c-1 and gives it to nobody."""
    event = _two_members([0], [2])
    event["members"]["c-3"] = {"topics": ["t"], "assigned": {}}
    record = conformance_record(event, {"t": 3})
    assert record is not None and record["conforms"] is True
    assert (record["observed_moves"], record["expected_moves"], record["min_moves"]) == (1, 1, 1)


@pytest.mark.parametrize(("generations", "moves"), [((5, 5), 1), ((5, 4), 1), ((4, 5), 2)])
def test_conflicting_claims_follow_kafkas_generation_rule(generations: tuple[int, int], moves: int) -> None:
    """t-0 is claimed by both members: the higher generation is its previous owner, equal generations mean
    nobody. t-1 (only c-1 claims it) goes to c-2: one move; t-0 stays with c-1, a second move only when
    c-2 was its owner."""
    event = {
        "group": "g", "type": "generation", "generation": 6, "protocol": "range",
        "members": {
            "c-1": {"topics": ["t"], "owned": {"t": [0, 1]}, "owned_generation": generations[0],
                    "assigned": {"t": [0]}},
            "c-2": {"topics": ["t"], "owned": {"t": [0]}, "owned_generation": generations[1],
                    "assigned": {"t": [1]}},
        },
    }
    record = conformance_record(event, {"t": 2})
    assert record is not None and record["conforms"] is True
    assert record["observed_moves"] == record["expected_moves"] == moves


def test_unknown_protocol_gives_null_with_a_reason() -> None:
    event = _two_members([0, 1], [2], protocol="my-custom")
    record = conformance_record(event, {"t": 3})
    assert record is not None
    assert record["conforms"] is None and "'my-custom'" in record["reason"]
    assert "differences" not in record


def test_members_without_assigned() -> None:
    event = _two_members([0, 1], [2])
    del event["members"]["c-2"]["assigned"]
    record = conformance_record(event, {"t": 3})
    assert record is not None and record["conforms"] is None
    assert record["reason"] == "members without assigned: c-2"
    for member in event["members"].values():
        member.pop("assigned", None)
    assert conformance_record(event, {"t": 3}) is None
    assert conformance_record({**event, "members": {}}, {"t": 3}) is None


def test_non_consumer_protocol_type() -> None:
    record = conformance_record(_two_members([0, 1], [2], protocol_type="connect"), {"t": 3})
    assert record is not None and record["conforms"] is None and "connect" in record["reason"]


def test_partitions_outside_the_metadata_are_differences_but_not_moves() -> None:
    """Observed holds t-5 of a 3-partition topic (stale metadata on one side): a difference, no move."""
    record = conformance_record(_two_members([0, 1], [2, 5]), {"t": 3})
    assert record is not None and record["conforms"] is False
    assert record["differences"] == {"c-2": {"observed_only": {"t": [5]}, "expected_only": {}}}
    assert (record["observed_moves"], record["expected_moves"]) == (0, 0)


def test_kafka_assignor_error_is_recorded() -> None:
    """Kafka's sticky assignors throw IllegalStateException when an owned partition is beyond the
    metadata's count (test_kafka_fidelity.py): a group that got an assignment did not run Kafka's."""
    event = {"group": "g", "type": "generation", "generation": 3, "protocol": "sticky",
             "members": {"c0": {"topics": ["t0"], "owned": {"t0": [985]}, "assigned": {"t0": [0]}}}}
    record = conformance_record(event, {"t0": 1})
    assert record is not None and record["conforms"] is False
    assert "java.lang.IllegalStateException" in record["error"] and "t0-985" in record["error"]
    assert "differences" not in record and "expected_moves" not in record
    assert (record["observed_moves"], record["min_moves"]) == (0, 0)

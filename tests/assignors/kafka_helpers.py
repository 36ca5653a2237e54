"""Ports of the helpers Kafka's assignor tests share (`AbstractPartitionAssignorTest`), so that each
ported test can keep Kafka's inputs and expectations verbatim.

Kafka's tests put consumers into a `HashMap`, so the leader-side member order is Java's HashMap
order; `members_in_hashmap_order` reproduces it (pass `initial_capacity` for `new HashMap<>(n)`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assignors.javaorder import hashmap_order
from assignors.model import Member, build_spec

ALL_RACKS = ["a", "b", "c", "d", "e", "f"]  # AbstractPartitionAssignorTest.ALL_RACKS
RACKS = ALL_RACKS
DEFAULT_GENERATION = -1


def grouped(result: Mapping[str, Sequence[tuple[str, int]]]) -> dict[str, dict[str, set[int]]]:
    """An assignment as member -> topic -> set of partitions, the shape the group-coordinator tests compare."""
    out: dict[str, dict[str, set[int]]] = {}
    for member, parts in result.items():
        per_topic: dict[str, set[int]] = {}
        for t, p in parts:
            per_topic.setdefault(t, set()).add(p)
        out[member] = per_topic
    return out


def tp(topic: str, partition: int) -> tuple[str, int]:
    return (topic, partition)


def tp_str(partition: tuple[str, int]) -> str:
    """Java's `TopicPartition.toString`: `topic-partition`."""
    return f"{partition[0]}-{partition[1]}"


def parse_tps(text: str) -> list[tuple[str, int]]:
    """`"t1-0, t2-3"` -> [("t1", 0), ("t2", 3)] (Kafka's `ownedPartitions(...)` string format)."""
    out = []
    for item in text.split(", "):
        if item:
            topic, _, p = item.rpartition("-")
            out.append((topic, int(p)))
    return out


def to_sorted_string(partitions: Sequence[tuple[str, int]]) -> str:
    """Kafka's `toSortedString`: string forms sorted as strings (so `t1-10` < `t1-2`), joined by ", "."""
    return ", ".join(sorted(tp_str(p) for p in partitions))


def racks(num_racks: int) -> list[str]:
    """`racks(n)`: rack i is ALL_RACKS[i % 6]."""
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(num_racks)]


def null_racks(num_racks: int) -> list[None]:
    return [None] * num_racks


def broker_racks(num_broker_racks: int, replication: int) -> list[str | None]:
    """Brokers of `partitionInfos(topic, n, rf, numBrokerRacks, idx)`: numBrokerRacks x rf brokers, broker i
    on rack ALL_RACKS[i % numBrokerRacks]; with numBrokerRacks <= 0, rf brokers without a rack."""
    if num_broker_racks <= 0:
        return [None] * replication
    return [ALL_RACKS[i % num_broker_racks] for i in range(num_broker_racks * replication)]


def replica_racks(
    num_partitions: int, replication: int, brokers: Sequence[str | None], next_node_index: int = 0
) -> list[list[str | None]]:
    """Replica racks per partition: partition i's replica j is on broker (i + j + next_node_index) % brokers."""
    n = len(brokers)
    return [[brokers[(i + j + next_node_index) % n] for j in range(replication)] for i in range(num_partitions)]


def partition_racks(
    topics: Mapping[str, int],
    num_broker_racks: int = 3,
    replication: int = 3,
    *,
    brokers: Sequence[str | None] | None = None,
    advance_node_index: bool = False,
) -> dict[str, list[list[str | None]]]:
    """Replica racks for every topic, as Kafka's test helpers lay them out.

    Default: each topic built by `partitionInfos(topic, n, replication, num_broker_racks, 0)` (RangeAssignorTest).
    `brokers` gives the broker rack list directly and `advance_node_index` starts each topic's replicas
    where the previous topic's ended, in `topics` order (the private `partitionsPerTopic` behind
    `verifyRackAssignment`, fed a LinkedHashMap by `mkMap`).
    """
    if brokers is None:
        brokers = broker_racks(num_broker_racks, replication)
    out: dict[str, list[list[str | None]]] = {}
    next_index = 0
    for topic, n in topics.items():
        out[topic] = replica_racks(n, replication, brokers, next_index if advance_node_index else 0)
        if advance_node_index:
            next_index += n
    return out


def members_in_hashmap_order(members: Mapping[str, Member], initial_capacity: int = 16) -> dict[str, Member]:
    """The members in the order Kafka's test `HashMap` (filled in the given order) iterates them."""
    return {mid: members[mid] for mid in hashmap_order(list(members), initial_capacity)}


def run_assignor(
    assignor,
    topics: Mapping[str, int],
    members: Mapping[str, Member],
    racks_by_topic: Mapping[str, Sequence[Sequence[str | None]]] | None = None,
) -> dict[str, list[tuple[str, int]]]:
    """One call of an assignor *instance* (so tests can set Kafka's test-only flags on it)."""
    spec = build_spec(topics, members, racks_by_topic)
    return spec.to_result(assignor.assign(spec))


def rack_mismatches(
    assignment: Mapping[str, Sequence[tuple[str, int]]],
    consumer_racks: Mapping[str, str | None],
    racks_by_topic: Mapping[str, Sequence[Sequence[str | None]]],
) -> list[tuple[str, int]]:
    """Partitions given to a consumer with a rack that has no replica on that rack."""
    out = []
    for member, parts in assignment.items():
        rack = consumer_racks.get(member)
        if rack is None:
            continue
        out.extend((t, p) for t, p in parts if rack not in racks_by_topic[t][p])
    return out


def verify_rack_assignment(
    assignor,
    topics: Mapping[str, int],
    replication: int,
    brokers: Sequence[str | None],
    consumer_racks: Sequence[str | None],
    consumer_topics: Sequence[Sequence[str]],
    expected: Sequence[str],
    num_partitions_with_rack_mismatch: int,
    owned: Sequence[str] = (),
    generation: int = DEFAULT_GENERATION,
) -> dict[str, list[tuple[str, int]]]:
    """`AbstractPartitionAssignorTest.verifyRackAssignment`: consumers `consumer0..`, replicas laid out with
    `advance_node_index`, expectations as sorted strings, mismatch count checked unless it is < 0."""
    names = [f"consumer{i}" for i in range(len(consumer_racks))]
    members = {
        name: Member(
            topics=list(consumer_topics[i]),
            owned=parse_tps(owned[i]) if i < len(owned) else (),
            generation=generation,
            rack=consumer_racks[i],
        )
        for i, name in enumerate(names)
    }
    members = members_in_hashmap_order(members, initial_capacity=len(names))
    layout = partition_racks(topics, replication=replication, brokers=brokers, advance_node_index=True)
    assignment = run_assignor(assignor, topics, members, layout)
    actual = {m: to_sorted_string(parts) for m, parts in assignment.items()}
    assert actual == dict(zip(names, expected, strict=True))
    if num_partitions_with_rack_mismatch >= 0:
        racks_of = dict(zip(names, consumer_racks, strict=True))
        mismatched = rack_mismatches(assignment, racks_of, layout)
        assert len(mismatched) == num_partitions_with_rack_mismatch, f"Partitions with rack mismatch {mismatched}"
    return assignment

"""kafka-python's own assignor classes, called as its group leader calls them, checked by conformance.

No broker: each case's recorded inputs (Kafka's assignor-test inputs from test_conformance.py, plus groups
with a static member) go to kafka-python's `RangePartitionAssignor`, `RoundRobinPartitionAssignor` or
`StickyPartitionAssignor` (sticky userData built with kafka-python's own `StickyAssignorUserData`), and
the result becomes the `assigned` of a `generation` event. The conformance record must name exactly the
partitions where kafka-python's result and Java's (the case's `assigned`: Kafka's asserted result) differ,
whatever kafka-python does; the tallies are printed and kept in docs/conformance.md.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData
from test_conformance import CASES, Case, M, by_topic, tps

from streaming.core.conformance import conformance_record

KAFKA_PYTHON = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
                "sticky": StickyPartitionAssignor}


class Cluster:
    """The two calls kafka-python's assignors make on its ClusterMetadata."""

    def __init__(self, sizes: dict[str, int]) -> None:
        self.sizes = sizes

    def topics(self) -> set[str]:
        return set(self.sizes)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return set(range(self.sizes[topic])) if topic in self.sizes else None


def kafka_python_result(case: Case) -> dict[str, list[tuple[str, int]]]:
    """kafka-python's leader-side assignment for the case's members, in the case's (JoinGroup) order."""
    members = []
    for mid, m in case.members.items():
        user_data = b""
        if case.protocol == "sticky" and m.generation is not None:
            user_data = StickyAssignorUserData(list(by_topic(m.owned).items()), m.generation)
        metadata = SimpleNamespace(topics=list(m.topics), user_data=user_data)
        members.append(SimpleNamespace(member_id=mid, group_instance_id=m.instance_id, metadata=metadata))
    result = KAFKA_PYTHON[case.protocol]().assign(Cluster(case.topics), members)
    return {mid: [(t, p) for t, ps in a.assigned_partitions for p in ps] for mid, a in result.items()}


STATIC_CASES = [
    # RangeAssignorTest.testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions with a second dynamic
    # member joining first: Java puts the static member first whatever the order.
    Case("static member between two dynamic ones", "range", {"t": 6}, {
        "d1": M(["t"], tps("t", 2, 3)),
        "s1": M(["t"], tps("t", 0, 1), instance_id="inst"),
        "d2": M(["t"], tps("t", 4, 5)),
    }),
    Case("static member between two dynamic ones", "roundrobin", {"t": 6}, {
        "d1": M(["t"], tps("t", 1, 4)),
        "s1": M(["t"], tps("t", 0, 3), instance_id="inst"),
        "d2": M(["t"], tps("t", 2, 5)),
    }),
]
# kafka-python 3.0.12's RoundRobin raises KeyError when some member does not subscribe to a topic (its
# member cycle yields (instance id, member id) pairs where member ids are expected): its leader never
# completes such a generation, where Java's assigns.
RAISES = {("roundrobin", "testMultipleConsumersMixedTopics")}
KP_CASES = [c for c in CASES if c.protocol in KAFKA_PYTHON and not c.partition_racks] + STATIC_CASES


@pytest.mark.parametrize("case", KP_CASES, ids=lambda c: f"{c.protocol}:{c.test}")
def test_kafka_python_against_java(case: Case) -> None:
    if (case.protocol, case.test) in RAISES:
        with pytest.raises(KeyError):
            kafka_python_result(case)
        print(f"kafka-python {case.protocol} on {case.test}: RAISES KeyError")
        return
    observed = kafka_python_result(case)
    event: dict[str, Any] = case.event()
    for mid, parts in observed.items():
        event["members"][mid]["assigned"] = by_topic(sorted(parts))
    record = conformance_record(event, case.topics)
    assert record is not None
    java = {mid: set(m.assigned) for mid, m in case.members.items()}
    expected_differences = {
        mid: {"observed_only": by_topic(sorted(set(observed[mid]) - java[mid])),
              "expected_only": by_topic(sorted(java[mid] - set(observed[mid])))}
        for mid in case.members if set(observed[mid]) != java[mid]
    }
    assert record["differences"] == expected_differences
    assert record["conforms"] is (not expected_differences)
    print(f"kafka-python {case.protocol} on {case.test}: {'conforms' if record['conforms'] else 'DIFFERS'}")

"""One consumer-group member of a real client library, run as a subprocess by `client_groups.py`.

    python client_member.py CLIENT STRATEGY BOOTSTRAP GROUP TOPICS NAME INSTANCE_ID OUT.jsonl STOP_FILE

CLIENT is `kafka-python` or `confluent-kafka` (librdkafka); TOPICS is comma-separated; INSTANCE_ID is the
`group.instance.id` of a static member, or `-`. The member subscribes to TOPICS and appends one
JSON line to OUT per assignment it receives, from the client's own callback:
`{"kind": "view", "name", "member_id", "generation", "assigned": {topic: [p...]}, "ts"}`.
kafka-python members also write, when they lead, what their assignor was given and what it returned
(`"kind": "leader"`: members in the order the coordinator sent them with their decoded subscriptions,
the leader's partition counts, and the assignment): a wrapper around kafka-python's own assignor class,
so that record is exactly the leader's computation. The member closes once STOP_FILE exists (a dynamic
member leaves the group then). librdkafka members pause what they are assigned: the group is about
assignment, and the local broker answers empty fetches at once; kafka-python members poll for one record
at a time with a pause between polls instead (pausing from the polling thread stalled its leader).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any


def now_ms() -> int:
    return int(time.time() * 1000)


class Out:
    def __init__(self, path: str, name: str) -> None:
        self.path, self.name = path, name

    def write(self, record: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"name": self.name, "ts": now_ms(), **record}) + "\n")


def by_topic(partitions: Any) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for tp in sorted(partitions, key=lambda tp: (tp.topic, tp.partition)):
        out.setdefault(tp.topic, []).append(tp.partition)
    return out


def run_kafka_python(strategy: str, bootstrap: str, group: str, topics: list[str], instance_id: str | None,
                     out: Out, stop: Path) -> None:
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    base = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
            "sticky": StickyPartitionAssignor}[strategy]

    class Recording(base):  # type: ignore[misc, valid-type]
        """kafka-python's assignor, recording the leader's inputs and output and each member's assignment."""

        pending: dict[str, Any] | None = None

        def assign(self, cluster, members):  # type: ignore[no-untyped-def]
            result = super().assign(cluster, members)
            subscribed = sorted({t for m in members for t in m.metadata.topics})
            self.pending = {
                "kind": "leader",
                "partitions": {t: n for t in subscribed if (n := len(cluster.partitions_for_topic(t) or ()))},
                "members": [_subscription(m) for m in members],
                "assignment": {mid: {t: sorted(ps) for t, ps in a.assigned_partitions} for mid, a in result.items()},
            }
            return result

        def on_assignment(self, assignment, generation):  # type: ignore[no-untyped-def]
            super().on_assignment(assignment, generation)
            if self.pending is not None:
                out.write({**self.pending, "generation": generation})
                self.pending = None
            out.write({"kind": "view", "member_id": consumer._coordinator._generation.member_id,
                       "generation": generation, "assigned": by_topic(assignment.partitions())})

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, client_id=out.name, enable_auto_commit=False,
        partition_assignment_strategy=[Recording()], metadata_max_age_ms=1000,
        session_timeout_ms=6000, heartbeat_interval_ms=500, max_poll_interval_ms=8000, request_timeout_ms=15000,
        group_instance_id=instance_id,
    )
    consumer.subscribe(topics)
    while not stop.exists():
        try:
            consumer.poll(timeout_ms=100, max_records=1)
        except Exception:  # kafka-python 3.0.12 raises on an empty SyncGroup assignment; it rejoins next poll
            logging.exception("poll failed")
        time.sleep(0.1)
    consumer.close()


def _subscription(member: Any) -> dict[str, Any]:
    """A JoinGroup member as the leader decoded it: topics, owned partitions + generation (the sticky
    userData of kafka-python's StickyPartitionAssignor, else the Subscription's own fields)."""
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    sub = member.metadata
    record: dict[str, Any] = {"member_id": member.member_id, "instance_id": member.group_instance_id,
                              "topics": list(sub.topics)}
    if sub.user_data:
        parsed = StickyPartitionAssignor.parse_member_metadata(sub)
        record["owned"] = by_topic(parsed.partitions)
        record["owned_generation"] = parsed.generation
    else:
        owned = getattr(sub, "owned_partitions", None) or []
        record["owned"] = {tp.topic: sorted(tp.partitions) for tp in owned}
        generation = getattr(sub, "generation_id", None)
        if generation is not None:
            record["owned_generation"] = generation
    return record


def run_confluent_kafka(strategy: str, bootstrap: str, group: str, topics: list[str], instance_id: str | None,
                        out: Out, stop: Path) -> None:
    from confluent_kafka import Consumer

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": out.name,
        "partition.assignment.strategy": strategy, "enable.auto.commit": False,
        "topic.metadata.refresh.interval.ms": 1000, "session.timeout.ms": 10000,
        "heartbeat.interval.ms": 500, **({"group.instance.id": instance_id} if instance_id else {}),
    })

    def on_assign(c: Any, partitions: list[Any]) -> None:
        out.write({"kind": "view", "member_id": c.memberid(), "generation": cgmd_generation(
            c.consumer_group_metadata()), "assigned": by_topic(partitions)})
        c.assign(partitions)
        c.pause(partitions)

    consumer.subscribe(topics, on_assign=on_assign)
    while not stop.exists():
        consumer.poll(0.1)
    consumer.close()


def cgmd_generation(blob: bytes) -> int:
    """The generation id in librdkafka's serialized consumer group metadata: the magic "CGMDv2:" and then
    the generation as a 32-bit integer in the host's byte order (librdkafka writes the struct field)."""
    magic = b"CGMDv2:"
    if not blob.startswith(magic):
        raise ValueError(f"unexpected consumer group metadata {blob[:16]!r}")
    return int.from_bytes(blob[len(magic):len(magic) + 4], sys.byteorder, signed=True)


def main(argv: list[str]) -> None:
    client, strategy, bootstrap, group, topics, name, instance_id, out_path, stop_file = argv
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    run = {"kafka-python": run_kafka_python, "confluent-kafka": run_confluent_kafka}[client]
    run(strategy, bootstrap, group, topics.split(","), None if instance_id == "-" else instance_id,
        Out(out_path, name), Path(stop_file))


if __name__ == "__main__":
    main(sys.argv[1:])

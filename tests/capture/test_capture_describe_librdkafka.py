"""`--source describe` against librdkafka consumer groups (confluent-kafka) on the local broker: the captured
`assigned` of each member equals what librdkafka handed that client in its on_assign callback."""

from __future__ import annotations

import re
import threading
import time
import uuid

import pytest
from test_capture_describe import RecordingAdmin

from streaming.capture.capture import TopicMetadata, describe_poll
from streaming.capture.coordinator_events import Translator

confluent_kafka = pytest.importorskip("confluent_kafka")
pytestmark = pytest.mark.kafka


class RdMember(threading.Thread):
    """A librdkafka consumer polling in a thread; `assigned` is what its last on_assign callback got."""

    def __init__(self, bootstrap: str, group: str, topic: str, client_id: str, strategy: str) -> None:
        super().__init__(daemon=True)
        self.consumer = confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
            "partition.assignment.strategy": strategy, "session.timeout.ms": 10000,
            "heartbeat.interval.ms": 300, "enable.auto.commit": False})
        self.consumer.subscribe([topic], on_assign=self._assigned, on_revoke=self._revoked)
        self.client_id = client_id
        self.assigned: dict[str, list[int]] | None = None
        self.stopping = threading.Event()

    def _assigned(self, consumer, partitions) -> None:
        out: dict[str, list[int]] = {}
        for tp in partitions:
            out.setdefault(tp.topic, []).append(tp.partition)
        self.assigned = {t: sorted(p) for t, p in out.items()}

    def _revoked(self, consumer, partitions) -> None:
        self.assigned = None

    def run(self) -> None:
        while not self.stopping.is_set():
            self.consumer.poll(0.2)
            time.sleep(0.05)
        self.consumer.close()

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=30)


def settled(admin, group: str, members: list[RdMember], partitions: int, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        d = admin.describe_groups([group]).get(group)
        held = [m.assigned for m in members]
        if (d is not None and d.group_state == "Stable" and len(d.members) == len(members)
                and all(h is not None for h in held)
                and sum(len(p) for h in held for p in h.values()) == partitions):
            return
        time.sleep(0.2)
    raise AssertionError(f"group {group} did not settle with {len(members)} members")


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_describe_polls_give_librdkafka_assignments(kafka_bootstrap, unique_topic, strategy) -> None:
    topic = unique_topic("rd", partitions=5)
    group = f"rd-{uuid.uuid4().hex[:8]}"
    admin = RecordingAdmin(bootstrap_servers=kafka_bootstrap)
    metadata = TopicMetadata(admin)
    tr = Translator("", re.compile(f"^{group}$"), metadata.count)
    members: list[RdMember] = []

    def poll_and_check() -> int:
        events, bad = describe_poll(admin, tr, metadata, None)
        assert bad == []
        (gen,) = [e for e in events if e["type"] == "generation"]
        assert gen["protocol"] == strategy
        assert {m["client_id"]: m.get("assigned") for m in gen["members"].values()} == {
            m.client_id: m.assigned for m in members}
        return gen["generation"]

    try:
        for name in ("r1", "r2", "r3"):
            members.append(RdMember(kafka_bootstrap, group, topic, name, strategy))
            members[-1].start()
        settled(admin, group, members, 5)
        seen = [poll_and_check()]
        members.pop(1).stop()
        settled(admin, group, members, 5)
        seen.append(poll_and_check())
        members.append(RdMember(kafka_bootstrap, group, topic, "r4", strategy))
        members[-1].start()
        settled(admin, group, members, 5)
        seen.append(poll_and_check())
        assert seen == [1, 2, 3]
    finally:
        for m in members:
            m.stop()
        admin.close()

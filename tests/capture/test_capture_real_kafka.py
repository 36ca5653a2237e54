"""`rebalance capture` from a real Apache Kafka's own `__consumer_offsets` (testcontainers; skipped with the
reason when no Docker daemon answers). The local broker never writes that topic, so this is the test of the
whole path on records a real group coordinator wrote: kafka-python groups (eager range, cooperative-sticky)
rebalance, and the captured `generation` events must carry the assignments the clients were handed."""

from __future__ import annotations

import io
import json
import re
import uuid

import pytest
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from test_capture_describe import Member, settled

from streaming.capture.capture import CaptureSettings, _RawDescribeAdmin, capture_offsets
from streaming.kafka.topics import ensure_topics

pytestmark = [pytest.mark.docker, pytest.mark.kafka]


@pytest.mark.parametrize("assignor", [RangePartitionAssignor, CooperativeStickyAssignor])
def test_capture_from_real_consumer_offsets(docker_kafka, assignor) -> None:
    tag = uuid.uuid4().hex[:8]
    topic, group = f"real-{tag}", f"grp-{tag}"
    ensure_topics(docker_kafka, {topic: 4})
    admin = _RawDescribeAdmin(bootstrap_servers=docker_kafka)
    members = [Member(docker_kafka, group, topic, name, assignor) for name in ("c1", "c2")]
    try:
        for m in members:
            m.start()
        settled(admin, group, members, 4)
        handed = {m.client_id: m.assigned for m in members}
        out = io.StringIO()
        capture_offsets(CaptureSettings(docker_kafka, "__consumer_offsets", re.compile(f"^{group}$"), once=True),
                        out, io.StringIO())
    finally:
        for m in members:
            m.stop()
        admin.close()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    generations = [e for e in events if e["type"] == "generation"]
    assert generations and events[0] == {**events[0], "type": "partitions", "partitions": {topic: 4}}
    last = generations[-1]
    assert last["protocol"] == assignor.name and last["source"]["topic"] == "__consumer_offsets"
    assert {m["client_id"]: m["assigned"] for m in last["members"].values()} == handed
    assert [e["generation"] for e in generations] == sorted({e["generation"] for e in generations})

"""`rebalance capture --source describe` on the test broker with the capture's own ListGroups encoding: where
the broker lacks KIP-848's group APIs (ApiVersions without ConsumerGroupDescribe, ListGroups below v5, as on
the local noida-db) the command says so in one line, once, and captures the classic groups."""

from __future__ import annotations

import io
import json
import re
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer

from streaming.capture.capture import CaptureSettings, capture_describe

pytestmark = pytest.mark.kafka

NOTE = re.compile(r"^capture: the cluster has no KIP-848 group APIs \(broker \d+: "
                  r"ListGroups v\d, (no ConsumerGroupDescribe|ConsumerGroupDescribe v\d)\): capturing classic "
                  r"groups only, through DescribeGroups; consumer-protocol groups \(group.protocol=consumer\) "
                  r"are not seen$")


def has_kip848(bootstrap: str) -> bool:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        versions = admin.api_versions()
    finally:
        admin.close()
    return 69 in {int(k) for k in versions} and versions[next(k for k in versions if int(k) == 16)][1] >= 5


@pytest.fixture
def classic_group(kafka_bootstrap, unique_topic):
    """A classic group with one kafka-python member holding both partitions of its topic."""
    topic = unique_topic("kip848", partitions=2)
    group = f"grp-{uuid.uuid4().hex[:8]}"
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group, enable_auto_commit=False,
                             session_timeout_ms=30000, heartbeat_interval_ms=500)
    consumer.subscribe([topic])
    while len(consumer.assignment()) < 2:
        consumer.poll(timeout_ms=200)
    yield group, topic
    consumer.close()


def notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if "KIP-848" in line]


def test_the_command_says_what_it_did_instead_of_describing_consumer_groups(kafka_bootstrap, classic_group, tmp_path,
                                                                           capsys) -> None:
    from streaming.cli.main import main

    group, topic = classic_group
    out = tmp_path / "described.jsonl"
    assert main(["capture", "--bootstrap", kafka_bootstrap, "--source", "describe", "--once", "--groups",
                 f"^{group}$", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    if has_kip848(kafka_bootstrap):
        assert notes(err) == []
    else:
        (line,) = notes(err)
        assert NOTE.match(line), line
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["type"] for e in events] == ["partitions", "generation"]
    ((_, member),) = events[1]["members"].items()
    assert member["assigned"] == {topic: [0, 1]}


def test_a_running_capture_says_it_once(kafka_bootstrap, classic_group) -> None:
    group, _ = classic_group
    progress = io.StringIO()
    settings = CaptureSettings(kafka_bootstrap, groups=re.compile(f"^{group}$"), poll_interval=0.2)
    capture_describe(settings, io.StringIO(), progress, stop=lambda: progress.getvalue().count("poll done") >= 3)
    err = progress.getvalue()
    assert err.count("poll done") == 3
    assert len(notes(err)) == (0 if has_kip848(kafka_bootstrap) else 1)


def test_consumer_protocol_groups_are_captured_from_a_kip848_broker(kafka_bootstrap, unique_topic, tmp_path,
                                                                    capsys) -> None:
    """Three librdkafka consumers with group.protocol=consumer (server-side `uniform`): the captured generation
    gives each the partitions its client holds, and conforms. Needs a broker with KIP-848's APIs (Apache
    Kafka 4: KAFKA_BOOTSTRAP=host:port); skipped with the reason on one without."""
    if not has_kip848(kafka_bootstrap):
        pytest.skip("the broker has no KIP-848 group APIs (ConsumerGroupDescribe, ListGroups v5): run with "
                    "KAFKA_BOOTSTRAP set to an Apache Kafka 4 broker")
    from confluent_kafka import Consumer

    from streaming.cli.main import main

    topic = unique_topic("kip848", partitions=6)
    group = f"grp-{uuid.uuid4().hex[:8]}"
    consumers = [Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": group, "client.id": f"c{i}",
                           "group.protocol": "consumer", "group.remote.assignor": "uniform",
                           "enable.auto.commit": False}) for i in range(3)]
    try:
        for c in consumers:
            c.subscribe([topic])
        held: dict[str, list[int]] = {}
        for _ in range(600):  # until the three hold the six partitions between them (a stalled group fails below)
            for c in consumers:
                c.poll(0.1)
            held = {f"c{i}": sorted(tp.partition for tp in c.assignment()) for i, c in enumerate(consumers)}
            if sorted(p for ps in held.values() for p in ps) == list(range(6)) and all(held.values()):
                break
        out = tmp_path / "kip848.jsonl"
        assert main(["capture", "--bootstrap", kafka_bootstrap, "--source", "describe", "--once", "--groups",
                     f"^{group}$", "--out", str(out)]) == 0
    finally:
        for c in consumers:
            c.close()
    events = [json.loads(line) for line in out.read_text().splitlines()]
    (gen,) = [e for e in events if e["type"] == "generation"]
    assert gen["protocol"] == "uniform"
    assert {m["client_id"]: m["assigned"].get(topic, []) for m in gen["members"].values()} == held
    capsys.readouterr()
    assert main(["conformance", str(out)]) == 0

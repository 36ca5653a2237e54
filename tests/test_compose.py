"""docker-compose.yml and Dockerfile structure (the compose plugin and a Docker engine are not available here,
so this checks what `docker compose config` would: services, dependencies, commands, environment)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from streaming.kafka.topics import ServeTopics
from streaming.spark.kafka_sink import DEFAULT_MARKER_TOPIC

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_kafka_is_a_single_kraft_apache_kafka_node_with_transactions(compose):
    kafka = compose["services"]["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    env = kafka["environment"]
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == f"{env['KAFKA_NODE_ID']}@kafka:9093"
    assert "PLAINTEXT://kafka:9092" in env["KAFKA_ADVERTISED_LISTENERS"].split(",")
    listeners = {entry.split("://")[0] for entry in env["KAFKA_LISTENERS"].split(",")}
    mapped = {entry.split(":")[0] for entry in env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(",")}
    assert listeners <= mapped and env["KAFKA_CONTROLLER_LISTENER_NAMES"] in listeners
    # single node: internal topics must not ask for 3 replicas, or transactions never become available
    assert env["KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"] == 1
    assert env["KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"] == 1
    assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == 1
    assert "kafka-broker-api-versions.sh" in " ".join(kafka["healthcheck"]["test"])


def test_topic_service_creates_the_service_topics_once_kafka_is_healthy(compose):
    topics = compose["services"]["topics"]
    assert topics["depends_on"]["kafka"]["condition"] == "service_healthy"
    assert topics["restart"] == "no"
    script = "\n".join(topics["command"])
    assert "--if-not-exists" in script and "retention.ms=-1" in script
    created = dict(re.findall(r"^\s*create (\S+) (\d+)\s*$", script, re.MULTILINE))
    defaults = ServeTopics()
    assert set(created) == {defaults.events, defaults.diffs, defaults.dead_letter, DEFAULT_MARKER_TOPIC}
    assert int(created[defaults.events]) == defaults.partitions["events"]
    assert int(created[DEFAULT_MARKER_TOPIC]) == 1  # markers are read from partition 0 only


def test_app_serves_from_kafka_after_topics_exist(compose):
    app = compose["services"]["app"]
    assert app["build"] == "."
    assert app["depends_on"]["topics"]["condition"] == "service_completed_successfully"
    assert app["depends_on"]["kafka"]["condition"] == "service_healthy"
    command = app["command"] if isinstance(app["command"], list) else shlex.split(app["command"])
    assert command[:3] == ["serve", "--bootstrap", "kafka:9092"]
    checkpoint = command[command.index("--checkpoint") + 1]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in app["volumes"]}
    assert any(checkpoint.startswith(target) for target in mounts)  # checkpoints survive container restarts
    assert set(compose["volumes"]) >= {mounts[t] for t in mounts}


def test_dockerfile_builds_the_cli_with_python_311_and_java_17():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim", text, re.MULTILINE)
    assert "openjdk-17-jre-headless" in text
    assert re.search(r"pip install (--no-cache-dir )?\.", text)
    assert 'ENTRYPOINT ["rebalance"]' in text
    for package in ("assignors", "streaming", "whatif"):  # everything pyproject's packages list needs
        assert f"COPY {package} " in text
    assert re.search(r"^USER (?!root)", text, re.MULTILINE)

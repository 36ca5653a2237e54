"""docker-compose.yml and Dockerfile structure (the compose plugin and a Docker engine are not available here,
so this checks what `docker compose config` would: services, dependencies, commands, environment)."""

from __future__ import annotations

import re
import shlex
import textwrap
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


def _command(service: dict) -> list[str]:
    return service["command"] if isinstance(service["command"], list) else shlex.split(service["command"])


def _mounts(service: dict) -> dict[str, str]:
    """container path -> host path of a service's bind mounts."""
    return {v.split(":")[1]: v.split(":")[0] for v in service.get("volumes", [])}


def test_exporter_reads_the_diffs_from_kafka_and_listens_on_its_port(compose):
    exporter = compose["services"]["exporter"]
    assert exporter["image"] == compose["services"]["app"]["image"]
    command = _command(exporter)
    assert command[:3] == ["exporter", "--bootstrap", "kafka:9092"]
    port = command[command.index("--port") + 1]
    assert f"{port}:{port}" in exporter["ports"]
    assert exporter["depends_on"]["topics"]["condition"] == "service_completed_successfully"


def test_prometheus_scrapes_the_exporter(compose):
    prometheus = compose["services"]["prometheus"]
    mounts = _mounts(prometheus)
    config_path = next(a.split("=", 1)[1] for a in prometheus["command"] if a.startswith("--config.file="))
    config = yaml.safe_load((ROOT / mounts[config_path]).read_text())
    targets = [t for job in config["scrape_configs"] for sc in job["static_configs"] for t in sc["targets"]]
    exporter_command = _command(compose["services"]["exporter"])
    assert targets == [f"exporter:{exporter_command[exporter_command.index('--port') + 1]}"]
    assert "exporter" in prometheus["depends_on"]


def test_grafana_is_provisioned_with_the_prometheus_datasource_and_the_dashboard(compose):
    grafana = compose["services"]["grafana"]
    mounts = _mounts(grafana)
    provisioning = ROOT / mounts["/etc/grafana/provisioning"]
    datasources = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())["datasources"]
    prometheus_port = compose["services"]["prometheus"]["ports"][0].split(":")[1]
    assert [(d["type"], d["url"], d["isDefault"]) for d in datasources] == [
        ("prometheus", f"http://prometheus:{prometheus_port}", True)]
    providers = yaml.safe_load((provisioning / "dashboards" / "rebalance-replay.yml").read_text())["providers"]
    dashboard_dir = providers[0]["options"]["path"]
    mounted = {target: ROOT / source for target, source in mounts.items() if target.startswith(dashboard_dir + "/")}
    assert mounted and all(path.is_file() and path.suffix == ".json" for path in mounted.values())
    assert grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"] in mounted


def secured_fragments(text: str) -> list[dict]:
    """The commented-out lines that follow each "Secured set-up" comment, uncommented and read as YAML."""
    fragments, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if "Secured set-up" in line:
            block = []
            for follower in lines[i + 1:]:
                if not follower.strip().startswith("#"):
                    break
                block.append(follower.strip()[1:])
            block = [b for b in block if b.startswith("   ")]  # the YAML lines, not the prose around them
            fragments.append(yaml.safe_load(textwrap.dedent("\n".join(block))))
    return fragments


def test_the_secured_set_up_shown_as_an_option_is_consistent(compose):
    """What docker-compose.yml and dashboards/prometheus.yml show for the exporter behind TLS, client
    certificates and basic auth: the web config and the files Prometheus presents sit in the one host
    directory both services mount, and the job scrapes the same target over https."""
    exporter_lines, prometheus_lines = secured_fragments((ROOT / "docker-compose.yml").read_text())
    command = exporter_lines["command"]
    plain = _command(compose["services"]["exporter"])
    assert command[:len(plain)] == plain and command[len(plain)] == "--web-config" and len(command) == len(plain) + 2
    exporter_mounts = _mounts(exporter_lines)
    web_config = Path(command[-1])
    assert str(web_config.parent) in exporter_mounts
    host_dir = exporter_mounts[str(web_config.parent)]
    prometheus_mounts = {target: source for source, target, *_ in
                         (v.split(":") for v in prometheus_lines)}
    scrape_dir = next(target for target, source in prometheus_mounts.items() if source == host_dir)

    config_text = (ROOT / "dashboards" / "prometheus.yml").read_text()
    (job_lines,) = secured_fragments(config_text)
    assert job_lines["scheme"] == "https" and job_lines["basic_auth"]["username"]
    files = [*job_lines["tls_config"].values(), job_lines["basic_auth"]["password_file"]]
    assert len(files) == 4 and all(Path(f).parent == Path(scrape_dir) for f in files)
    job = yaml.safe_load(config_text)["scrape_configs"][0]
    assert set(job_lines).isdisjoint(job)  # lines to add to the plain job, which keeps its target

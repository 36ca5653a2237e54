"""Shared fixtures: ONE SparkSession and ONE Kafka-protocol broker per test session.

- ``spark``: local[2], 2 shuffle partitions, UI off, the project's data sources registered.
- ``kafka_bootstrap``: ``$KAFKA_BOOTSTRAP`` when set (any real broker), else a noida-db broker started once.
- ``unique_topic``: factory creating a fresh topic per call, so tests never see each other's records.
- ``docker_kafka``: a real Apache Kafka in a container (testcontainers) when a Docker daemon answers; otherwise
  the test is skipped with the reason printed ("no Docker daemon: ...").
- ``pure_python(module)`` tests are skipped, with the reason printed, where that module runs compiled (setup.py):
  they patch its internals, which compiled code calls directly; test.sh runs them again on the pure-Python build.
"""

from __future__ import annotations

import importlib
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from streaming.build import is_compiled, prefer_fresh_sources

# Before any test or conftest below imports the library: the tests run the build that matches the sources, or
# the sources themselves with REBALANCE_PURE_PYTHON=1.
prefer_fresh_sources()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for mark in item.iter_markers("pure_python"):
            module = mark.args[0]
            if is_compiled(importlib.import_module(module)):
                item.add_marker(pytest.mark.skip(reason=f"patches {module}'s internals, compiled here: test.sh runs "
                                                        f"it with REBALANCE_PURE_PYTHON=1"))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from streaming.spark.session import build_spark

    session = build_spark("rebalance-replay-tests", shuffle_partitions=2)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    given = os.environ.get("KAFKA_BOOTSTRAP")
    if given:
        yield given
        return
    from streaming.demo.local_broker import LocalBroker

    with LocalBroker() as broker:
        yield broker.bootstrap


@pytest.fixture(scope="session")
def kafka_admin(kafka_bootstrap: str) -> Iterator[Any]:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    yield admin
    admin.close()


@pytest.fixture
def unique_topic(kafka_bootstrap: str) -> Callable[..., str]:
    """``unique_topic("events", partitions=2, configs=None) -> name``: a new topic that exists on return."""
    from streaming.kafka.topics import ensure_topics

    def make(prefix: str = "t", partitions: int = 1, configs: dict[str, str] | None = None) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        ensure_topics(kafka_bootstrap, {name: partitions}, configs=configs)
        return name

    return make


def docker_unavailable_reason() -> str | None:
    """Why no Docker daemon can be used, or None when one answers."""
    try:
        import docker

        docker.from_env(timeout=5).ping()
    except Exception as exc:  # any failure means: no usable daemon
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


@pytest.fixture(scope="session")
def docker_kafka() -> Iterator[str]:
    """Bootstrap of a real Apache Kafka (KRaft) container; skips with the reason when Docker is unavailable."""
    reason = docker_unavailable_reason()
    if reason:
        print(f"no Docker daemon: {reason}")
        pytest.skip(f"no Docker daemon: {reason}")
    from testcontainers.kafka import KafkaContainer

    with KafkaContainer().with_kraft() as container:
        yield container.get_bootstrap_server()

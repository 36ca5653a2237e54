"""The service's topics and their creation: idempotent, with the settings a replayed history needs.

`serve`, `load`, `capture` and the exactly-once sink create missing topics on real clusters as well as on the
local broker, so the defaults below suit both: a replayed log carries old event timestamps, which time-based
retention would delete at once (the local broker drops records older than 7 days; a real cluster's default is
also 7 days), and dead letters carry up to 2 MB of the original bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka import KafkaAdminClient
from kafka.errors import KafkaError, TopicAlreadyExistsError

from streaming.kafka.options import to_kafka_python

DEFAULT_TOPIC_CONFIGS = {"retention.ms": "-1", "max.message.bytes": str(8 * 1024 * 1024)}


@dataclass(frozen=True)
class ServeTopics:
    """The service's topic names, and the partition counts used when it creates them."""

    events: str = "rebalance.events"
    diffs: str = "rebalance.diffs"
    dead_letter: str = "rebalance.dead-letter"
    conformance: str = "rebalance.conformance"
    partitions: Mapping[str, int] = field(
        default_factory=lambda: {"events": 2, "diffs": 2, "dead_letter": 1, "conformance": 1})


def ensure_serve_topics(bootstrap: str, topics: ServeTopics, kafka_options: Mapping[str, str] | None = None) -> None:
    """Create the service's topics if missing (existing ones are left as they are)."""
    n = topics.partitions
    ensure_topics(bootstrap, {topics.events: n["events"], topics.diffs: n["diffs"],
                              topics.dead_letter: n["dead_letter"], topics.conformance: n["conformance"]},
                  kafka_options=kafka_options)


def ensure_topics(bootstrap: str, topics: Mapping[str, int], configs: Mapping[str, str] | None = None,
                  kafka_options: Mapping[str, Any] | None = None) -> list[str]:
    """Create missing topics ``{name: partitions}`` (existing ones are left as they are); returns the created.

    ``configs`` defaults to `DEFAULT_TOPIC_CONFIGS`. A broker that rejects a config (unknown name) gets the topic
    created without configs rather than not at all.
    """
    configs = dict(DEFAULT_TOPIC_CONFIGS if configs is None else configs)
    admin = KafkaAdminClient(**to_kafka_python({**(kafka_options or {}), "bootstrap.servers": bootstrap}, "admin"))
    created = []
    try:
        existing = set(admin.list_topics())
        for name, partitions in topics.items():
            if name in existing:
                continue
            spec = {"num_partitions": int(partitions), "replication_factor": -1, "configs": configs}
            try:
                admin.create_topics({name: spec})
            except TopicAlreadyExistsError:
                continue
            except KafkaError as exc:
                if not configs or "config" not in str(exc).lower():
                    raise
                admin.create_topics({name: {**spec, "configs": {}}})
            created.append(name)
        if created:
            admin.wait_for_topics(created)
    finally:
        admin.close()
    return created


def unreachable(bootstrap: str, kafka_options: Mapping[str, str] | None = None, timeout_ms: int = 5000) -> str | None:
    """Why the cluster does not answer a metadata request within `timeout_ms`, or None when it does (a TCP
    connect alone is not enough: a stopped broker's kernel still accepts connections)."""
    kwargs = to_kafka_python({**(kafka_options or {}), "bootstrap.servers": bootstrap}, "admin")
    kwargs.update(request_timeout_ms=timeout_ms, bootstrap_timeout_ms=timeout_ms)
    try:
        admin = KafkaAdminClient(**kwargs)
        try:
            admin.list_topics()
        finally:
            admin.close()
    except (KafkaError, OSError) as exc:
        return str(exc) or type(exc).__name__
    return None

"""`rebalance exporter`: read the diff and conformance topics (read_committed, no consumer group, from the
beginning) and serve the folded metrics over HTTP for Prometheus.

Two threads: an HTTP server (`prometheus_client`'s text format; over TLS with auth given a web config,
`web.py`) answers scrapes from the state under a lock, and the consumer loop folds records into it. The HTTP
side never waits on the broker, so the exporter keeps answering while the broker is unreachable; the loop
logs one warning when it loses the broker and one line when it is back, and kafka-python reconnects on its
own (positions are kept, nothing is re-read).

Why read from the beginning on every start instead of storing a snapshot: the topics are kept forever
(`retention.ms=-1`, streaming/kafka/topics.py), the fold is cheap (a few seconds per 100k records) and a
pure function of the committed records, so every start and every replica serves the same numbers with no
snapshot to store, version, or keep consistent with the offsets it was taken at.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka import TopicPartition
from kafka.errors import KafkaError
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, ProcessCollector, generate_latest

from streaming.exporter.fold import CONFORMANCE, DIFF, MetricState
from streaming.exporter.prometheus import HealthCollector, render_groups
from streaming.exporter.web import serve
from streaming.exporter.web_config import WebConfig
from streaming.kafka.consumer import committed_consumer

log = logging.getLogger("rebalance.exporter")

DEFAULT_TOPICS = {DIFF: "rebalance.diffs", CONFORMANCE: "rebalance.conformance"}
LOGGED_DECODE_ERRORS = 20  # each of the first ones is logged, then one in every 1000


@dataclass(frozen=True)
class ExporterConfig:
    bootstrap: str
    topics: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_TOPICS))  # kind -> topic
    kafka_options: Mapping[str, str] = field(default_factory=dict)
    host: str = "0.0.0.0"
    port: int = 9464
    max_groups: int = 1000
    groups: str | None = None
    refresh_s: float = 10.0  # how often missing topics and new partitions are looked for
    lag_s: float = 5.0  # how often end offsets are asked for (lag, broker health)
    web: WebConfig | None = None  # TLS and basic auth (`--web-config`); None: plain HTTP


class Exporter:
    """`serve_http()` once, then `run(stop)` until `stop` is set."""

    def __init__(self, config: ExporterConfig) -> None:
        self.config = config
        self.state = MetricState(config.max_groups, config.groups)
        self.lock = threading.Lock()
        self.health_registry = CollectorRegistry()
        self.health_registry.register(HealthCollector(self.state, self.lock, dict(config.topics)))
        ProcessCollector(registry=self.health_registry)  # process_resident_memory_bytes & co.
        self._groups_text: tuple[tuple[int, bool], bytes] = ((-1, False), b"")
        self.kinds = {topic: kind for kind, topic in config.topics.items()}
        self.assigned: set[TopicPartition] = set()
        self.targets: dict[TopicPartition, int] | None = None  # end offsets seen at start
        self.started = time.monotonic()
        self._next_refresh = self._next_lag = 0.0
        self._broker_warned = False

    def serve_http(self) -> int:
        """Start the metrics endpoint in a daemon thread; returns its port (`port` 0 picks a free one)."""
        return serve(self.config.host, self.config.port, self._app, self.config.web)

    def exposition(self) -> bytes:
        """The text Prometheus scrapes: health rendered now, per-group series rendered once per change."""
        with self.lock:
            key = (self.state.version, self.state.health.caught_up)
            cached_key, groups = self._groups_text
            snapshot = self.state.snapshot() if cached_key != key else None
        if snapshot is not None:  # rendered outside the lock: the fold goes on meanwhile
            groups = render_groups(snapshot)
            self._groups_text = (key, groups)
        return generate_latest(self.health_registry) + groups

    def _app(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        if environ.get("PATH_INFO", "/") not in ("/", "/metrics"):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found; metrics are at /metrics\n"]
        body = self.exposition()
        start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
        return [body]

    def run(self, stop: threading.Event) -> None:
        consumer = None
        try:
            while not stop.is_set():
                try:
                    if consumer is None:
                        consumer = self._consumer()
                    self._step(consumer)
                except KafkaError as exc:
                    self._broker_down(exc)
                    stop.wait(min(self.config.lag_s, 5.0))
        finally:
            if consumer is not None:
                consumer.close()

    def _consumer(self) -> Any:
        # a lost broker is noticed within 15 s, one back is reconnected to within 5 s, and a fetch buffers at
        # most 4 MiB of records (kafka-python's default: 50 MiB), which bounds the memory of a catch-up
        options = {"request.timeout.ms": "15000", "reconnect.backoff.max.ms": "5000", "fetch.max.bytes": "4194304",
                   **self.config.kafka_options,
                   "bootstrap.servers": self.config.bootstrap}
        return committed_consumer(options, auto_offset_reset="earliest", allow_auto_create_topics=False)

    def _step(self, consumer: Any) -> None:
        now = time.monotonic()
        if now >= self._next_refresh:
            self._assign(consumer)
            self._next_refresh = now + self.config.refresh_s
        if self.assigned:
            batches = consumer.poll(timeout_ms=1000)
            with self.lock:
                for tp, records in batches.items():
                    kind = self.kinds[tp.topic]
                    for r in records:
                        reason = self.state.add(kind, r.value)
                        if reason is not None:
                            self._log_decode_error(kind, r, reason)
        else:
            time.sleep(1.0)
        if time.monotonic() >= self._next_lag or self.targets is None or not self.state.health.caught_up:
            self._update_lag(consumer)
            self._next_lag = time.monotonic() + self.config.lag_s

    def _assign(self, consumer: Any) -> None:
        """Assign every partition of the topics (new topics and partitions from offset 0)."""
        found = {TopicPartition(topic, p) for topic in self.kinds
                 for p in (consumer.partitions_for_topic(topic) or ())}
        new = found - self.assigned
        if new:
            consumer.assign(sorted(found))
            consumer.seek_to_beginning(*sorted(new))
            self.assigned = found
            log.info("reading %s", ", ".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(new)))
        if self.targets is None:
            self.targets = consumer.end_offsets(sorted(found)) if found else {}
            self._broker_up()

    def _update_lag(self, consumer: Any) -> None:
        if not self.assigned:
            caught_up, lag = True, {}
        else:
            tps = sorted(self.assigned)
            ends = consumer.end_offsets(tps)
            positions = {tp: consumer.position(tp) for tp in tps}
            lag = {topic: 0 for topic in self.kinds}
            for tp in tps:
                lag[tp.topic] += max(ends[tp] - positions[tp], 0)
            caught_up = all(positions[tp] >= end for tp, end in (self.targets or {}).items())
        self._broker_up()
        with self.lock:
            self.state.health.lag = lag
            if caught_up and not self.state.health.caught_up:
                h = self.state.health
                log.info("caught up: %d diff and %d conformance records in %.1f s (%d decode errors)",
                         h.records[DIFF], h.records[CONFORMANCE], time.monotonic() - self.started,
                         sum(h.decode_errors.values()))
            self.state.health.caught_up |= caught_up

    def _broker_up(self) -> None:
        if self._broker_warned:
            log.info("broker %s reachable again", self.config.bootstrap)
            self._broker_warned = False
        self.state.health.broker_up = True

    def _broker_down(self, exc: Exception) -> None:
        self.state.health.broker_up = False
        if not self._broker_warned:
            log.warning("broker %s unreachable (%s: %s); still serving the metrics read so far, retrying",
                        self.config.bootstrap, type(exc).__name__, exc)
            self._broker_warned = True

    def _log_decode_error(self, kind: str, record: Any, reason: str) -> None:
        n = self.state.health.decode_errors[kind]
        if n <= LOGGED_DECODE_ERRORS or n % 1000 == 0:
            log.warning("%s[%d] offset %d: undecodable %s record skipped (%s); %d so far",
                        record.topic, record.partition, record.offset, kind, reason, n)


"""`rebalance exporter` as a process against a broker that goes away and comes back (a local broker of this
test's own, restarted on the same port and data), and a restarted exporter rebuilding its counters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.exporter import ExporterProcess, produce_transaction, wait_for
from streaming.core.config import PipelineConfig, parse_strategies
from streaming.core.local import read_jsonl, replay
from streaming.demo.local_broker import LocalBroker, free_port
from streaming.kafka.topics import ensure_topics
from whatif.histories import sample_path

pytestmark = pytest.mark.kafka

TOPIC = "rebalance.diffs"
READ = 'rebalance_exporter_records_total{topic="rebalance.diffs"}'


def diffs(history: str) -> list[bytes]:
    config = PipelineConfig(strategies=parse_strategies("sticky,cooperative-sticky"))
    return [r.value for r in replay(read_jsonl(sample_path(history)), config, max_events_per_batch=None)
            if r.kind == "diff"]


def group_series(samples: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in samples.items() if k.startswith("rebalance_") and 'group="' in k}


def test_keeps_serving_through_a_broker_restart_and_rebuilds_counters_when_restarted(tmp_path: Path):
    (tmp_path / "broker").mkdir()
    broker = LocalBroker(port=free_port(), data_dir=tmp_path / "broker").start()
    exporters: list[ExporterProcess] = []
    try:
        ensure_topics(broker.bootstrap, {TOPIC: 2})
        first, second = diffs("rolling-deploy"), diffs("flapping-member")
        produce_transaction(broker.bootstrap, TOPIC, first)
        exporters.append(ExporterProcess(broker.bootstrap, tmp_path / "a.log"))
        a = exporters[0]
        wait_for(lambda: a.samples().get("rebalance_exporter_caught_up") == 1, "caught up")
        before = a.samples()
        assert before[READ] == len(first)
        moved = sum(json.loads(v)["moves"] for v in first)
        assert sum(v for k, v in before.items() if k.startswith("rebalance_partitions_moved_total{")) == moved

        broker.stop()
        wait_for(lambda: a.samples()["rebalance_exporter_broker_up"] == 0, "the outage noticed", 90)
        during = a.samples()  # still answering, with everything read so far
        assert group_series(during) == group_series(before)
        assert "unreachable" in a.log.read_text()

        broker.start()
        produce_transaction(broker.bootstrap, TOPIC, second)
        wait_for(lambda: a.samples()[READ] == len(first) + len(second), "records written after the restart", 120)
        wait_for(lambda: a.samples()["rebalance_exporter_broker_up"] == 1, "broker_up again", 60)
        assert "reachable again" in a.log.read_text()

        exporters.append(ExporterProcess(broker.bootstrap, tmp_path / "b.log"))  # a restarted exporter
        b = exporters[1]
        wait_for(lambda: b.samples().get("rebalance_exporter_caught_up") == 1, "restarted exporter caught up")
        assert group_series(b.samples()) == group_series(a.samples())
    finally:
        for e in exporters:
            e.stop()
        broker.stop()


def test_serves_its_health_while_no_broker_answers(tmp_path: Path):
    exporter = ExporterProcess(f"127.0.0.1:{free_port()}", tmp_path / "e.log")
    try:
        wait_for(lambda: "unreachable" in exporter.log.read_text(), "the warning", 90)
        samples = exporter.samples()
        assert samples["rebalance_exporter_broker_up"] == 0 and samples["rebalance_exporter_caught_up"] == 0
        assert group_series(samples) == {}
    finally:
        exporter.stop()

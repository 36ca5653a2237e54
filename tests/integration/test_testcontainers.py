"""Smoke test of the Kafka source and exactly-once sink against a real Apache Kafka broker (testcontainers).

Skipped with the printed reason when no Docker daemon answers; run it wherever Docker is available (or point
the whole suite at a real broker with KAFKA_BOOTSTRAP=host:port)."""

from __future__ import annotations

import json
import uuid

import pytest
from kafka import KafkaProducer
from kafka_io import consume_all, produce

from assignors.partitioner import partition_for_key
from streaming.kafka.topics import ensure_topics

pytestmark = [pytest.mark.docker, pytest.mark.kafka, pytest.mark.spark]


def test_source_to_exactly_once_sink_on_real_kafka(docker_kafka, spark, tmp_path):
    tag = uuid.uuid4().hex[:8]
    src, out, markers = f"in-{tag}", f"out-{tag}", f"markers-{tag}"
    ensure_topics(docker_kafka, {src: 2, out: 3, markers: 1})
    produce(docker_kafka, src, [(i % 2, f"g{i % 5}".encode(), f"e{i}".encode()) for i in range(40)])
    aborted = KafkaProducer(bootstrap_servers=docker_kafka, transactional_id=f"abort-{tag}")
    aborted.init_transactions()
    aborted.begin_transaction()
    aborted.send(src, key=b"g0", value=b"aborted", partition=0)
    aborted.flush()
    aborted.abort_transaction()
    aborted.close()

    def run() -> None:
        rows = (spark.readStream.format("rebalance-kafka").option("kafka.bootstrap.servers", docker_kafka)
                .option("subscribe", src).option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "15")
                .load().selectExpr(f"'{out}' AS topic", "CAST(key AS STRING) AS key", "value"))
        (rows.writeStream.format("rebalance-kafka-eos").option("kafka.bootstrap.servers", docker_kafka)
         .option("markerTopic", markers).option("checkpointLocation", str(tmp_path / "ckpt"))
         .trigger(availableNow=True).start().awaitTermination())

    run()
    last_commit = max((tmp_path / "ckpt" / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
    last_commit.unlink()  # the last batch is re-run; its marker makes the sink skip it
    run()

    records = consume_all(docker_kafka, out)
    assert sorted(r.value for r in records) == sorted(f"e{i}".encode() for i in range(40))
    assert all(r.partition == partition_for_key(r.key, 3) for r in records)
    batches = [json.loads(r.value)["batch"] for r in consume_all(docker_kafka, markers)]
    assert batches == sorted(set(batches)) and len(batches) >= 3

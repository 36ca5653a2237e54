"""The "rebalance-kafka" source against a real Kafka-protocol broker and real Spark (local mode)."""

from __future__ import annotations

import json
import threading
import time

import pytest
from kafka import KafkaProducer, TopicPartition
from kafka_io import produce, run_available_now
from pyspark.errors import StreamingQueryException
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from streaming.spark.kafka_source import DataLossError, KafkaRange, KafkaStreamReader, split_limit
from streaming.spark.schemas import SOURCE_SCHEMA

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def source(spark, bootstrap, topic, **options):
    reader = (spark.readStream.format("rebalance-kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic))
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader


def values(batches):
    return [(r.partition, r.offset, r.value) for _, rows in batches for r in rows]


def test_split_limit_is_proportional_exact_and_deterministic():
    assert split_limit({0: 10, 1: 0, 2: 5}, 100) == {0: 10, 1: 0, 2: 5}
    share = split_limit({0: 70, 1: 20, 2: 10}, 11)
    assert sum(share.values()) == 11 and share == {0: 8, 1: 2, 2: 1}
    assert split_limit({0: 1, 1: 1, 2: 1}, 2) == {0: 1, 1: 1, 2: 0}  # ties go to the lower partition


def test_earliest_reads_everything_with_sparks_kafka_schema(spark, kafka_bootstrap, unique_topic, tmp_path):
    topic = unique_topic("src-earliest", partitions=2)
    produce(kafka_bootstrap, topic, [(i % 2, f"k{i}".encode(), f"v{i}".encode()) for i in range(10)])
    df_schema = source(spark, kafka_bootstrap, topic).load().schema
    assert df_schema.simpleString() == SOURCE_SCHEMA.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp,"
        "timestampType:int,headers:array<struct<key:string,value:binary>>>")
    batches = run_available_now(spark, source(spark, kafka_bootstrap, topic, startingOffsets="earliest"),
                                str(tmp_path / "ckpt"))
    rows = sorted((r for _, rs in batches for r in rs), key=lambda r: (r.partition, r.offset))
    assert [(r.partition, r.offset, r.key, r.value) for r in rows] == sorted(
        (i % 2, i // 2, f"k{i}".encode(), f"v{i}".encode()) for i in range(10))
    assert {r.topic for r in rows} == {topic} and {r.timestampType for r in rows} == {0}
    assert all(r.headers is None for r in rows)  # none were produced (`load`'s size header: test_bad_input)
    assert all(abs(r.timestamp.timestamp() - time.time()) < 600 for r in rows)


def test_latest_and_per_partition_json_starting_offsets(spark, kafka_bootstrap, unique_topic, tmp_path):
    topic = unique_topic("src-start", partitions=2)
    produce(kafka_bootstrap, topic, [(p, None, f"old-{p}-{i}".encode()) for p in (0, 1) for i in range(4)])

    # per-partition JSON: partition 0 from offset 2, partition 1 from earliest (-2)
    start = json.dumps({topic: {"0": 2, "1": -2}})
    got = values(run_available_now(spark, source(spark, kafka_bootstrap, topic, startingOffsets=start),
                                   str(tmp_path / "json")))
    assert sorted(got) == [(0, 2, b"old-0-2"), (0, 3, b"old-0-3")] + [(1, i, f"old-1-{i}".encode()) for i in range(4)]

    # latest: the first run starts at the end and sees nothing old; a restart sees only what came after
    ckpt = str(tmp_path / "latest")
    assert run_available_now(spark, source(spark, kafka_bootstrap, topic, startingOffsets="latest"), ckpt) == []
    produce(kafka_bootstrap, topic, [(1, None, b"new")])
    assert values(run_available_now(spark, source(spark, kafka_bootstrap, topic), ckpt)) == [(1, 4, b"new")]

    reader = KafkaStreamReader({"kafka.bootstrap.servers": kafka_bootstrap, "subscribe": topic,
                                "startingOffsets": json.dumps({topic: {"0": 1}})}, SOURCE_SCHEMA)
    with pytest.raises(ValueError, match=r"no offset for .* partitions \[1\]"):
        reader.initialOffset()
    reader.stop()


def test_max_offsets_per_trigger_splits_batches_and_reads_each_record_once(spark, kafka_bootstrap, unique_topic,
                                                                          tmp_path):
    topic = unique_topic("src-limit", partitions=3)
    produce(kafka_bootstrap, topic, [(i % 3, None, str(i).encode()) for i in range(100)])
    reader = KafkaStreamReader({"kafka.bootstrap.servers": kafka_bootstrap, "subscribe": topic,
                                "startingOffsets": "earliest", "maxOffsetsPerTrigger": "30"}, SOURCE_SCHEMA)
    assert reader.getDefaultReadLimit() == ReadMaxRows(30)
    first = reader.latestOffset(reader.initialOffset(), ReadMaxRows(30))
    assert first == {topic: {"0": 10, "1": 10, "2": 10}}
    assert reader.latestOffset(first, ReadAllAvailable()) == {topic: {"0": 34, "1": 33, "2": 33}}
    reader.stop()

    batches = run_available_now(spark, source(spark, kafka_bootstrap, topic, startingOffsets="earliest",
                                              maxOffsetsPerTrigger="30"), str(tmp_path / "ckpt"))
    assert [len(rows) for _, rows in batches] == [30, 30, 30, 10]
    assert sorted(int(v) for _, _, v in values(batches)) == list(range(100))


def test_partition_added_while_running_is_read_from_its_start(spark, kafka_bootstrap, kafka_admin, unique_topic,
                                                              tmp_path):
    topic = unique_topic("src-grow", partitions=1)
    seen: list[tuple[int, bytes]] = []
    lock = threading.Lock()

    def collect(df, _batch_id):
        rows = df.collect()
        with lock:
            seen.extend((r.partition, r.value) for r in rows)

    query = (source(spark, kafka_bootstrap, topic, startingOffsets="earliest").load().writeStream
             .foreachBatch(collect).option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(processingTime="0 seconds").start())
    try:
        produce(kafka_bootstrap, topic, [(0, None, b"before")])
        query.processAllAvailable()
        kafka_admin.create_partitions({topic: 3})
        produce(kafka_bootstrap, topic, [(2, None, b"new-partition"), (0, None, b"after")])
        query.processAllAvailable()
    finally:
        query.stop()
    assert sorted(seen) == [(0, b"after"), (0, b"before"), (2, b"new-partition")]


def test_lost_records_fail_the_query_unless_fail_on_data_loss_is_false(spark, kafka_bootstrap, kafka_admin,
                                                                       unique_topic, tmp_path):
    topic = unique_topic("src-loss", partitions=1)
    ckpt = str(tmp_path / "ckpt")
    produce(kafka_bootstrap, topic, [(0, None, str(i).encode()) for i in range(5)])
    assert len(values(run_available_now(spark, source(spark, kafka_bootstrap, topic, startingOffsets="earliest"),
                                        ckpt))) == 5
    produce(kafka_bootstrap, topic, [(0, None, str(i).encode()) for i in range(5, 10)])
    # DeleteRecords (noida-db supports it, like Kafka) stands in for retention: offsets 5 and 6 vanish unread
    kafka_admin.delete_records({TopicPartition(topic, 0): 7})

    with pytest.raises(StreamingQueryException, match=rf"data loss in {topic}-0: offsets 5\.\.6 .*earliest offset "
                                                      r"is 7.*failOnDataLoss=false"):
        run_available_now(spark, source(spark, kafka_bootstrap, topic), ckpt)
    got = values(run_available_now(spark, source(spark, kafka_bootstrap, topic, failOnDataLoss="false"), ckpt))
    assert got == [(0, 7, b"7"), (0, 8, b"8"), (0, 9, b"9")]

    # a log that now ends below the position Spark logged (topic recreated) is data loss too
    options = {"kafka.bootstrap.servers": kafka_bootstrap, "subscribe": topic}
    ahead = {topic: {"0": 50}}
    strict = KafkaStreamReader(options, SOURCE_SCHEMA)
    with pytest.raises(DataLossError, match=rf"{topic}-0 \(at offset 50, log now ends at 10\)"):
        strict.latestOffset(ahead, ReadAllAvailable())
    lenient = KafkaStreamReader({**options, "failOnDataLoss": "false"}, SOURCE_SCHEMA)
    end = lenient.latestOffset(ahead, ReadAllAvailable())
    assert end == {topic: {"0": 10}}
    assert lenient.partitions(ahead, end) == [KafkaRange(topic, 0, 0, 10)]  # read again from the start
    strict.stop()
    lenient.stop()


def test_aborted_transactional_records_are_never_read(spark, kafka_bootstrap, unique_topic, tmp_path):
    topic = unique_topic("src-txn", partitions=1)
    produce(kafka_bootstrap, topic, [(0, None, b"plain")])
    # separate transactional ids: a producer id that aborted must not write again (noida-db 0.2.3 bug, see
    # streaming/spark/kafka_sink.py), which is also what the exactly-once sink does
    for tid, value in (("src-txn-a", b"aborted"), ("src-txn-c", b"committed")):
        producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, transactional_id=f"{tid}-{topic}")
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, value=value, partition=0)
        producer.flush()
        producer.abort_transaction() if value == b"aborted" else producer.commit_transaction()
        producer.close()
    got = values(run_available_now(spark, source(spark, kafka_bootstrap, topic, startingOffsets="earliest"),
                                   str(tmp_path / "ckpt")))
    assert [v for _, _, v in got] == [b"plain", b"committed"]


def test_a_worker_holds_a_bounded_batch_and_no_value_over_the_event_limit(kafka_bootstrap, unique_topic):
    """Records a producer made larger than the event limit reach Spark as `load` would have produced them (a
    prefix, the true size in the header; a size header already there is kept), and a batch is cut by bytes
    as well as by rows, so a worker's memory does not grow with the records' sizes."""
    from streaming.core.lines import PREFIX_BYTES, SIZE_HEADER
    from streaming.spark.kafka_source import read_range

    topic = unique_topic("src-big", partitions=1)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, max_request_size=8 << 20)
    producer.send(topic, value=b"x" * 300_000, partition=0)  # over the limit: cut
    producer.send(topic, value=b"y" * 300_000, partition=0, headers=[(SIZE_HEADER, b"5000000")])  # from `load`
    for i in range(6):
        producer.send(topic, value=f'{{"n": {i}}}'.encode() + b" " * 150_000, partition=0)  # within the limit
    producer.flush()
    producer.close()
    batches = list(read_range(KafkaRange(topic, 0, 0, 8), {"bootstrap.servers": kafka_bootstrap}, SOURCE_SCHEMA,
                              fail_on_data_loss=True, poll_timeout_ms=30_000, batch_rows=10_000,
                              batch_bytes=400_000, max_event_bytes=200_000))
    rows = [row for batch in batches for row in batch.to_pylist()]
    assert [len(r["value"]) for r in rows] == [PREFIX_BYTES, PREFIX_BYTES] + [len(rows[2]["value"])] * 6
    assert [r["headers"] for r in rows[:2]] == [[{"key": SIZE_HEADER, "value": b"300000"}],
                                               [{"key": SIZE_HEADER, "value": b"5000000"}]]
    assert all(r["headers"] is None for r in rows[2:])
    assert [batch.num_rows for batch in batches] == [4, 3, 1]  # about 400 kB of values each


def test_planning_and_reading_wait_for_a_restarted_broker(tmp_path):
    """The source's driver side (end offsets, through one long-lived admin client) and a task's read (through
    the worker's cached consumer), each called while the broker is down and restarting: both answer once it
    is back, instead of failing the query (kafka-python raises at once while a broker is down, and a client
    can keep failing after the restart: `streaming.kafka.retry`). A broker of its own: the test kills it."""
    import os
    import signal

    from streaming.demo.local_broker import LocalBroker
    from streaming.kafka.topics import ensure_topics
    from streaming.spark.kafka_source import read_range

    broker = LocalBroker(data_dir=tmp_path / "broker").start()
    restarted: list[LocalBroker] = []

    def kill_and_restart_in(seconds: float) -> threading.Thread:
        assert broker.process is not None
        os.kill(broker.process.pid, signal.SIGKILL)
        broker.process.wait()

        def restart() -> None:
            time.sleep(seconds)
            restarted.append(LocalBroker(port=broker.port, data_dir=broker.data_dir).start())

        thread = threading.Thread(target=restart)
        thread.start()
        return thread

    try:
        ensure_topics(broker.bootstrap, {"events": 2})
        produce(broker.bootstrap, "events", [(i % 2, b"g", f"e{i}".encode()) for i in range(10)])
        time.sleep(1.5)  # noida-db saves acknowledged writes within ~0.5 s (test_faults.py)
        options = {"bootstrap.servers": broker.bootstrap}
        reader = KafkaStreamReader({"kafka.bootstrap.servers": broker.bootstrap, "subscribe": "events",
                                    "startingOffsets": "earliest", "pollTimeoutMs": "60000"}, SOURCE_SCHEMA)
        start = reader.initialOffset()
        assert reader.latestOffset(start, ReadAllAvailable()) == {"events": {"0": 5, "1": 5}}
        list(read_range(KafkaRange("events", 0, 0, 5), options, SOURCE_SCHEMA, fail_on_data_loss=True,
                        poll_timeout_ms=60_000, batch_rows=100))  # the worker's consumer, connected

        restarting = kill_and_restart_in(3)
        assert reader.latestOffset(start, ReadAllAvailable()) == {"events": {"0": 5, "1": 5}}
        restarting.join()
        broker = restarted.pop()
        restarting = kill_and_restart_in(3)
        batches = list(read_range(KafkaRange("events", 1, 0, 5), options, SOURCE_SCHEMA, fail_on_data_loss=True,
                                  poll_timeout_ms=60_000, batch_rows=100))
        restarting.join()
        broker = restarted.pop()
        read = [v for b in batches for v in b.column("value").to_pylist()]
        assert read == [f"e{i}".encode() for i in (1, 3, 5, 7, 9)]
        reader.stop()
    finally:
        broker.stop()

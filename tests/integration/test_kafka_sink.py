"""The exactly-once "rebalance-kafka-eos" sink against a real Kafka-protocol broker and real Spark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from kafka_io import consume_all, produce
from pipeline_helpers import comparable, config, serve_topics, topic_records, write_log
from pyspark.sql.types import BinaryType, StringType, StructField, StructType

from assignors.partitioner import partition_for_key
from streaming.kafka.loader import load_log
from streaming.kafka.topics import ServeTopics
from streaming.kafka.transactions import transactional_ids
from streaming.spark.kafka_sink import CollectedRows, KafkaEosStreamWriter, TransactionalCommit
from streaming.spark.pipelines import serve_events

pytestmark = [pytest.mark.kafka]


def writer(bootstrap: str, marker_topic: str, **options: str) -> KafkaEosStreamWriter:
    schema = StructType([StructField("topic", StringType()), StructField("key", StringType()),
                         StructField("value", BinaryType())])
    return KafkaEosStreamWriter({"kafka.bootstrap.servers": bootstrap, "markerTopic": marker_topic, **options},
                                schema)


def test_commit_twice_for_the_same_batch_writes_once(kafka_bootstrap, unique_topic):
    out, markers = unique_topic("sink-twice", partitions=2), unique_topic("markers")
    sink = writer(kafka_bootstrap, markers)
    query_id = uuid.uuid4().hex
    messages = [CollectedRows(0, query_id, [(out, b"g1", b"a"), (out, b"g2", b"b")]),
                CollectedRows(1, query_id, [(out, b"g1", b"c")])]
    sink.commit(messages[::-1], 0)  # whatever order the messages come in, tasks are written in partition order
    sink.commit(messages, 0)  # replay of batch 0 after a crash that hid the commit from Spark
    sink.commit([CollectedRows(0, query_id, [(out, b"g1", b"d")]), None], 1)

    records = consume_all(kafka_bootstrap, out)
    assert sorted(r.value for r in records) == [b"a", b"b", b"c", b"d"]
    by_key = {}
    for r in records:
        assert r.partition == partition_for_key(r.key, 2)  # Kafka's default murmur2 partitioning
        by_key.setdefault(r.key, []).append(r.value)
    assert by_key[b"g1"] == [b"a", b"c", b"d"]  # task order, then row order, then batch order
    marker_values = [json.loads(r.value) for r in consume_all(kafka_bootstrap, markers)]
    assert [m["batch"] for m in marker_values] == [0, 1]


def test_producer_killed_between_data_and_marker_leaves_nothing_visible(kafka_bootstrap, unique_topic, tmp_path):
    out, markers = unique_topic("sink-kill", partitions=1), unique_topic("markers")
    sink_id = f"test-{uuid.uuid4().hex}"
    batch = 7
    tid = next(transactional_ids(sink_id, batch))
    script = tmp_path / "half_commit.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal
        from kafka import KafkaProducer
        p = KafkaProducer(bootstrap_servers={kafka_bootstrap!r}, transactional_id={tid!r})
        p.init_transactions()
        p.begin_transaction()
        for v in (b"x", b"y"):
            p.send({out!r}, key=b"g", value=v)
        p.flush()                                   # the data is in the log, inside the open transaction
        os.kill(os.getpid(), signal.SIGKILL)        # ... and the marker never follows
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    assert [r.value for r in consume_all(kafka_bootstrap, out, isolation="read_uncommitted")] == [b"x", b"y"]
    assert consume_all(kafka_bootstrap, out) == []  # read_committed: the open transaction is invisible

    committer = TransactionalCommit({"bootstrap.servers": kafka_bootstrap}, markers, sink_id)
    assert committer.last_committed_batch() == -1
    assert committer.commit(batch, lambda: [(out, b"g", b"x"), (out, b"g", b"y")], 2) is True  # fences, then writes
    assert committer.commit(batch, lambda: [(out, b"g", b"x"), (out, b"g", b"y")], 2) is False
    committed = consume_all(kafka_bootstrap, out)
    assert [r.value for r in committed] == [b"x", b"y"]
    assert committer.last_committed_batch() == batch
    # a consumer that starts after the abort marker sees them too (a fixed transactional id would reuse the
    # aborted producer id, whose later records noida-db 0.2.3 hides from such consumers)
    later = consume_all(kafka_bootstrap, out, start={0: committed[0].offset})
    assert [r.value for r in later] == [b"x", b"y"]


def test_a_commit_the_restarted_broker_aborted_is_written_again(tmp_path):
    """A broker killed while a batch's transaction is open and restarted before the commit: noida-db aborts the
    transaction on restart yet answers the commit with success (CI stop 22 lost a batch's diffs this way under
    tests/integration/test_faults.py). `write_batch` reads its marker back and writes the batch again, once.
    A broker of its own: the test kills it (see test_faults.py)."""
    import signal

    from streaming.demo.local_broker import LocalBroker
    from streaming.kafka.topics import ensure_topics
    from streaming.kafka.transactions import write_batch

    broker = LocalBroker(data_dir=tmp_path / "broker").start()
    try:
        options = {"bootstrap.servers": broker.bootstrap}
        ensure_topics(broker.bootstrap, {"out": 2, "markers": 1})
        attempts: list[int] = []

        def rows() -> list[tuple[str, bytes, bytes]]:
            attempts.append(len(attempts))
            return [("out", b"g", b"x"), ("out", b"h", b"y")]

        def restart_broker_once(producer) -> None:
            nonlocal broker
            if len(attempts) > 1:
                return
            producer.flush()
            time.sleep(1.5)  # noida-db saves acknowledged writes within ~0.5 s (test_faults.py)
            assert broker.process is not None
            os.kill(broker.process.pid, signal.SIGKILL)
            broker.process.wait()
            broker = LocalBroker(port=broker.port, data_dir=broker.data_dir).start()

        assert write_batch(options, "w", 0, rows, "markers", {}, before_commit=restart_broker_once) is True
        assert len(attempts) == 2, "the first commit was expected to be lost to the restart (noida-db)"
        assert sorted(r.value for r in consume_all(broker.bootstrap, "out")) == [b"x", b"y"]
        assert [json.loads(r.value) for r in consume_all(broker.bootstrap, "markers")] == [{"batch": 0}]
        assert write_batch(options, "w", 0, rows, "markers", {}) is False  # a re-run finds it committed
        assert len(attempts) == 2
    finally:
        broker.stop()


@pytest.mark.spark
def test_query_rerun_for_the_same_batch_id_is_skipped(spark, kafka_bootstrap, unique_topic, tmp_path):
    src, out, markers = unique_topic("sink-in"), unique_topic("sink-out", partitions=2), unique_topic("markers")
    produce(kafka_bootstrap, src, [(0, f"g{i % 3}".encode(), f"e{i}".encode()) for i in range(12)])
    ckpt = tmp_path / "ckpt"

    def run() -> None:
        rows = (spark.readStream.format("rebalance-kafka").option("kafka.bootstrap.servers", kafka_bootstrap)
                .option("subscribe", src).option("startingOffsets", "earliest").load()
                .selectExpr(f"'{out}' AS topic", "CAST(key AS STRING) AS key", "value"))
        (rows.writeStream.format("rebalance-kafka-eos").option("kafka.bootstrap.servers", kafka_bootstrap)
         .option("markerTopic", markers).option("checkpointLocation", str(ckpt))
         .trigger(availableNow=True).start().awaitTermination())

    run()
    # a crash after the sink's transaction committed but before Spark logged the batch: Spark re-runs batch 0
    commits = sorted((ckpt / "commits").iterdir(), key=lambda p: p.name)
    assert [p.name for p in commits if not p.name.startswith(".")] == ["0"]
    for p in (ckpt / "commits").iterdir():
        p.unlink()
    run()
    assert [p.name for p in (ckpt / "commits").iterdir() if not p.name.startswith(".")] == ["0"]

    records = consume_all(kafka_bootstrap, out)
    assert sorted(r.value for r in records) == sorted(f"e{i}".encode() for i in range(12))
    for key in (b"g0", b"g1", b"g2"):  # per-group order survives (one source partition, one task)
        mine = [r for r in records if r.key == key]
        assert [r.value for r in mine] == [f"e{i}".encode() for i in range(12) if f"g{i % 3}".encode() == key]
        assert {r.partition for r in mine} == {partition_for_key(key, 2)}
    assert [json.loads(r.value)["batch"] for r in consume_all(kafka_bootstrap, markers)] == [0]



def task_rows(out: str) -> list[list[tuple[str, bytes | None, bytes | None]]]:
    """Two tasks' rows to `out`: several keys, sizes from 0 to 3 KB, a null value (a tombstone)."""
    return [[(out, f"g{i % 5}".encode(), None if i == 7 else bytes([i]) * (i * 97 % 3000)) for i in range(t, 60, 2)]
            for t in (0, 1)]


def committed_batch(sink: KafkaEosStreamWriter, out: str, batch: int, query_id: str) -> list[CollectedRows]:
    """`task_rows` collected by their tasks and committed as `batch`; returns the commit messages."""
    messages = [sink.collect(rows, t, query_id, batch) for t, rows in enumerate(task_rows(out))]
    sink.commit(messages[::-1], batch)
    return messages


def as_written(bootstrap: str, topic: str) -> list[tuple[int, bytes, bytes | None]]:
    return [(r.partition, r.key, r.value) for r in consume_all(bootstrap, topic)]


def test_a_spilled_batch_is_committed_once_in_the_same_order(kafka_bootstrap, unique_topic):
    plain_out, spilled_out = unique_topic("plain", partitions=2), unique_topic("spilled", partitions=2)
    markers, staging = unique_topic("markers"), f"staging-{uuid.uuid4().hex[:10]}"
    plain = writer(kafka_bootstrap, markers)
    spilling = writer(kafka_bootstrap, markers, spillBytesPerTask="4096", stagingTopic=staging)

    messages = committed_batch(plain, plain_out, 0, uuid.uuid4().hex)
    assert all(m.staged is None for m in messages)
    query_id = uuid.uuid4().hex
    messages = committed_batch(spilling, spilled_out, 0, query_id)
    assert all(m.staged is not None and m.rows == [] and m.staged.count == 30 for m in messages)
    assert all(len(m.staged.ranges) == 1 for m in messages)  # each attempt on a partition of its own

    spilling.commit(messages, 0)  # Spark re-runs batch 0 after a crash that hid the commit
    again = [spilling.collect(rows, t, query_id, 0) for t, rows in enumerate(task_rows(spilled_out))]
    spilling.commit(again, 0)  # ... with freshly staged rows: skipped all the same

    expected = as_written(kafka_bootstrap, plain_out)
    assert len(expected) == 60 and any(v is None for _, _, v in expected)
    assert as_written(kafka_bootstrap, spilled_out) == expected  # same rows, partitions and order, each once
    marker_values = [json.loads(r.value) for r in consume_all(kafka_bootstrap, markers)]
    assert marker_values[-1] == {"batch": 0, "records": 60}
    assert len(consume_all(kafka_bootstrap, staging, isolation="read_uncommitted")) == 120  # never re-read twice


def test_a_crash_between_staging_and_commit_then_a_rerun_is_exactly_once(kafka_bootstrap, unique_topic, tmp_path):
    out, markers = unique_topic("sink-staged", partitions=2), unique_topic("markers")
    staging, query_id, batch = f"staging-{uuid.uuid4().hex[:10]}", uuid.uuid4().hex, 3
    options = {"spillBytesPerTask": "4096", "stagingTopic": staging}
    reached = tmp_path / "reached"
    script = tmp_path / "stage_and_die.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from test_kafka_sink import task_rows, writer
        sink = writer({kafka_bootstrap!r}, {markers!r}, **{options!r})
        sink.collect(task_rows({out!r})[1], 1, {query_id!r}, {batch})  # task 1 of the batch: frozen once staged
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE,
                            env={**os.environ, "REBALANCE_FAULT": f"sink-staged:{batch}",
                                 "REBALANCE_FAULT_MARKER": str(reached)})
    try:
        deadline = time.monotonic() + 120
        while not reached.exists():
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the task never reached sink-staged"
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
    assert reached.read_text().strip() == f"sink-staged:{batch}"
    assert len(consume_all(kafka_bootstrap, staging, isolation="read_uncommitted")) == 30  # staged, unreferenced
    assert consume_all(kafka_bootstrap, out) == []

    sink = writer(kafka_bootstrap, markers, **options)  # the restarted query re-runs the batch
    messages = [sink.collect(rows, t, query_id, batch) for t, rows in enumerate(task_rows(out))]
    sink.commit(messages, batch)
    sink.commit(messages, batch)
    records = consume_all(kafka_bootstrap, out)
    assert sorted(r.value or b"" for r in records) == sorted(v or b"" for rows in task_rows(out) for _, _, v in rows)
    for key in {k for rows in task_rows(out) for _, k, _ in rows}:  # per key: task order, then row order
        assert [r.value for r in records if r.key == key] == [v for rows in task_rows(out) for _, k, v in rows
                                                                if k == key]
    assert [json.loads(r.value)["batch"] for r in consume_all(kafka_bootstrap, markers)] == [batch]


@pytest.mark.spark
def test_serve_commits_a_flood_of_large_invalid_events_by_spilling(spark, kafka_bootstrap, unique_topic, tmp_path):
    """The crash loop this guards against: one batch's dead letters far beyond what a task may hold. Here 40
    invalid events of 100 KB in one micro-batch against a 64 KiB spill threshold; what read_committed consumers
    see equals a run that holds everything in memory."""
    samples = Path(__file__).parents[2] / "whatif" / "samples" / "rolling-deploy.jsonl"
    lines = [line for line in samples.read_bytes().splitlines() if line.strip()]
    for i in range(40):
        lines.insert(i * 2, b'{"broken": "' + bytes([97 + i % 26]) * 100_000)
    reference = serve_topics(unique_topic)
    load_log(write_log(tmp_path / "log.jsonl", lines), kafka_bootstrap, reference.events, progress=None)
    spilled = ServeTopics(reference.events, unique_topic("diffs", partitions=2), unique_topic("dead", partitions=1))
    staging = f"staging-{uuid.uuid4().hex[:10]}"

    outputs = []
    for topics, sink_options in ((reference, {}), (spilled, {"spillBytesPerTask": "65536", "stagingTopic": staging})):
        serve_events(spark, kafka_bootstrap, config("sticky"), checkpoint=str(tmp_path / topics.diffs),
                     topics=topics, once=True, max_events_per_batch=len(lines), sink_options=sink_options,
                     progress=None)
        outputs.append([[comparable(r) for r in topic_records(kafka_bootstrap, t)]
                        for t in (topics.diffs, topics.dead_letter)])
    (diffs, dead), (spilled_diffs, spilled_dead) = outputs
    assert len(dead) == 40 and len(diffs) > 10
    assert (spilled_diffs, spilled_dead) == (diffs, dead)
    assert len(consume_all(kafka_bootstrap, staging, isolation="read_uncommitted")) >= 40


def test_staged_rows_gone_before_the_commit_fail_that_commit_only(kafka_bootstrap, kafka_admin, unique_topic):
    """Retention deleting an attempt's staged rows (here: DeleteRecords) fails its commit with nothing visible;
    the batch's re-run stages its rows again and commits them once."""
    from kafka import TopicPartition

    out, markers = unique_topic("sink-gone", partitions=2), unique_topic("markers")
    sink = writer(kafka_bootstrap, markers, spillBytesPerTask="4096", stagingTopic=f"staging-{uuid.uuid4().hex[:10]}")
    query_id = uuid.uuid4().hex
    messages = [sink.collect(rows, t, query_id, 0) for t, rows in enumerate(task_rows(out))]
    staged = messages[1].staged
    kafka_admin.delete_records({TopicPartition(staged.topic, staged.partition): staged.ranges[0][0] + 1})
    with pytest.raises(RuntimeError, match="deleted"):
        sink.commit(messages, 0)
    assert consume_all(kafka_bootstrap, out) == [] and consume_all(kafka_bootstrap, markers) == []

    sink.commit([sink.collect(rows, t, query_id, 0) for t, rows in enumerate(task_rows(out))], 0)
    assert len(consume_all(kafka_bootstrap, out)) == 60
    assert [json.loads(r.value) for r in consume_all(kafka_bootstrap, markers)] == [{"batch": 0, "records": 60}]

"""`rebalance capture --traffic-interval` on the local broker, measuring what real producers write.

Two producers run while the capture measures: kafka-python writes keyed records (its partitioner is Java's
murmur2 one, so each key's partition is known beforehand) at a fixed rate per key, and confluent-kafka
(librdkafka) writes null-key records, which its partitioner spreads over the partitions at random. Both
send, every 10 ms, what their schedule has due by then, so a stall is caught up at once.

Tolerance, and why: a captured rate is the end-offset growth between two samples divided by the time
between them. The producers and the broker share this machine's two cores with other work, so records
due just before a sample may be written just after it; with 6-9 s measured per partition, a 1 s stall at
either end moves about 1/6 of a partition's records across the boundary. A keyed partition's mean captured
rate must be within 25 % of the rate produced to it; a partition nobody writes to must read exactly 0. The
null-key topic's total is held to the same 25 %; each of its partitions, whose share is random (binomial:
about 5 % spread over this many records), to within 50 % of an even share.
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
import uuid
from collections.abc import Callable

import coordinator_encoder as enc
import pytest
from confluent_kafka import Producer as ConfluentProducer
from kafka import KafkaConsumer, KafkaProducer

from assignors.partitioner import murmur2, to_positive
from streaming.capture.capture import CaptureSettings, capture_describe, capture_offsets
from streaming.cli.main import main as cli
from streaming.kafka.consumer import read_to_end

pytestmark = pytest.mark.kafka

KEYED_PARTITIONS, NULL_PARTITIONS = 4, 3
KEY_RATES = {0: 120.0, 2: 40.0}  # keyed topic: partition -> msgs/s produced (partitions 1 and 3: none)
NULL_RATE = 90.0  # null-key topic, all partitions together
TOLERANCE, SHARE_TOLERANCE = 0.25, 0.5


def key_for(partition: int) -> bytes:
    """A key Kafka's default partitioner sends to `partition` of the keyed topic."""
    n = 0
    while to_positive(murmur2(f"user-{n}".encode())) % KEYED_PARTITIONS != partition:
        n += 1
    return f"user-{n}".encode()


class PacedProducers(threading.Thread):
    """Both producers, each record sent when its fixed-rate schedule has it due."""

    def __init__(self, bootstrap: str, keyed: str, null_key: str) -> None:
        super().__init__(daemon=True)
        self.keyed, self.null_key = keyed, null_key
        self.kafka_python = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, acks=1)
        self.librdkafka = ConfluentProducer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": 1})
        self.keys = {p: key_for(p) for p in KEY_RATES}
        self.stopping = threading.Event()
        self.sent = 0

    def run(self) -> None:
        start = time.monotonic()
        done = dict.fromkeys([*KEY_RATES, None], 0)
        while not self.stopping.is_set():
            elapsed = time.monotonic() - start
            for p, rate in KEY_RATES.items():
                for _ in range(int(rate * elapsed) - done[p]):
                    self.kafka_python.send(self.keyed, key=self.keys[p], value=b"x")
                    done[p] += 1
            for _ in range(int(NULL_RATE * elapsed) - done[None]):
                self.librdkafka.produce(self.null_key, value=b"x")
                done[None] += 1
            self.librdkafka.poll(0)
            self.sent = sum(done.values())
            time.sleep(0.01)

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=30)
        self.kafka_python.close()
        self.librdkafka.flush(30)


@pytest.fixture
def traffic(kafka_bootstrap: str, unique_topic) -> tuple[str, str]:
    """(keyed topic, null-key topic), written to at the rates above while the test runs."""
    keyed, null_key = unique_topic("keyed", KEYED_PARTITIONS), unique_topic("nullkey", NULL_PARTITIONS)
    producers = PacedProducers(kafka_bootstrap, keyed, null_key)
    producers.start()
    while producers.sent < 50:  # both clients connected and writing
        time.sleep(0.05)
    yield keyed, null_key
    producers.stop()


def check_rates(events: list[dict], group: str, keyed: str, null_key: str) -> None:
    """The traffic events of `group`: every partition of both topics, at the produced rates (see the docstring)."""
    traffic = [e for e in events if e["type"] == "traffic" and e["group"] == group]
    by_topic = {t: [e["rates"] for e in traffic if e["topic"] == t] for t in (keyed, null_key)}
    assert by_topic[keyed] and by_topic[null_key], traffic
    assert all(len(r) == KEYED_PARTITIONS for r in by_topic[keyed])
    assert all(len(r) == NULL_PARTITIONS for r in by_topic[null_key])
    mean = {t: [sum(col) / len(col) for col in zip(*rs, strict=True)] for t, rs in by_topic.items()}
    print(f"captured msgs/s, mean of {len(by_topic[keyed])} interval(s): {mean}")
    for p in range(KEYED_PARTITIONS):
        produced = KEY_RATES.get(p, 0.0)
        if produced == 0:
            assert all(r[p] == 0 for r in by_topic[keyed]), (p, by_topic[keyed])
        else:
            assert abs(mean[keyed][p] - produced) <= TOLERANCE * produced, (p, mean[keyed][p], produced)
    assert abs(sum(mean[null_key]) - NULL_RATE) <= TOLERANCE * NULL_RATE, mean[null_key]
    even = NULL_RATE / NULL_PARTITIONS
    assert all(abs(r - even) <= SHARE_TOLERANCE * even for r in mean[null_key]), mean[null_key]
    # in order with the other events: after the group's partition counts, which the rates' lengths follow
    first = events.index(traffic[0])
    told = {t for e in events[:first] if e["group"] == group and e["type"] == "partitions" for t in e["partitions"]}
    assert {keyed, null_key} <= told


def until(out: io.StringIO, enough: Callable[[list[dict]], bool]) -> Callable[[], bool]:
    return lambda: enough([json.loads(line) for line in out.getvalue().splitlines()])


@pytest.mark.parametrize("output", ["file", "events-topic"])
def test_once_from_the_offsets_topic_measures_one_interval(kafka_bootstrap, unique_topic, traffic, tmp_path, output):
    """The CLI, `--source offsets --once --traffic-interval 6`: a group recorded in a stand-in offsets topic,
    one measured interval per topic after its history, in a file or in the events topic (keyed by group)."""
    keyed, null_key = traffic
    group = f"traffic-{uuid.uuid4().hex[:8]}"
    offsets_topic = unique_topic("offsets", 1)
    member = enc.member(member_id="c-1", group_instance_id=None, client_id="app", client_host="/10.0.0.1",
                        rebalance_timeout=30000, session_timeout=10000,
                        subscription=enc.subscription(1, [keyed, null_key]),
                        assignment=enc.assignment(1, [(keyed, [0, 1, 2, 3]), (null_key, [0, 1, 2])]))
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(offsets_topic, key=enc.key(2, group),
                  value=enc.value(2, 3, protocol_type="consumer", generation=1, protocol="range", leader="c-1",
                                  current_state_timestamp=1_732_200_000_000, members=[member])).get(timeout=30)
    producer.close()
    argv = ["capture", "--bootstrap", kafka_bootstrap, "--offsets-topic", offsets_topic, "--once",
            "--traffic-interval", "6"]
    if output == "file":
        out = tmp_path / "captured.jsonl"
        assert cli([*argv, "--out", str(out)]) == 0
        events = [json.loads(line) for line in out.read_text().splitlines()]
    else:
        events_topic = f"captured-{uuid.uuid4().hex[:8]}"
        assert cli([*argv, "--events-topic", events_topic]) == 0
        records = read_to_end(kafka_bootstrap, events_topic)
        assert {r.key for r in records} == {group.encode()}
        events = [json.loads(r.value) for r in records]  # one group: one partition, in order
    assert [e["type"] for e in events] == ["partitions", "generation", "traffic", "traffic"]
    check_rates(events, group, keyed, null_key)


def test_describe_polls_measure_a_live_group_every_interval(kafka_bootstrap, traffic):
    """`--source describe --traffic-interval 3` beside a real kafka-python consumer group subscribed to both
    topics: rates events every interval once the group's generation was seen."""
    keyed, null_key = traffic
    group = f"traffic-{uuid.uuid4().hex[:8]}"
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group, enable_auto_commit=False,
                             heartbeat_interval_ms=300, session_timeout_ms=10000, max_poll_interval_ms=10000)
    consumer.subscribe([keyed, null_key])
    polling = threading.Event()

    def consume() -> None:
        while not polling.is_set():
            consumer.poll(timeout_ms=200)

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    out = io.StringIO()
    settings = CaptureSettings(kafka_bootstrap, groups=re.compile(f"^{group}$"), poll_interval=1.0,
                               traffic_interval=3.0)
    try:
        capture_describe(settings, out, io.StringIO(), stop=until(
            out, lambda evs: sum(e["type"] == "traffic" and e["topic"] == keyed for e in evs) >= 3))
    finally:
        polling.set()
        thread.join(timeout=30)
        consumer.close()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    check_rates(events, group, keyed, null_key)


def test_a_continuous_offsets_capture_measures_from_the_end_of_the_history(kafka_bootstrap, unique_topic, traffic):
    """Without `--once`, sampling starts when the offsets topic has been read to its end, then goes on every
    interval; the events topic is not needed for it (a file output here)."""
    keyed, null_key = traffic
    group = f"traffic-{uuid.uuid4().hex[:8]}"
    offsets_topic = unique_topic("offsets", 2)
    member = enc.member(member_id="c-1", group_instance_id=None, client_id="app", client_host="/10.0.0.1",
                        rebalance_timeout=30000, session_timeout=10000,
                        subscription=enc.subscription(0, [keyed, null_key]),
                        assignment=enc.assignment(0, [(keyed, [0, 1, 2, 3]), (null_key, [0, 1, 2])]))
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(offsets_topic, key=enc.key(2, group), partition=1,
                  value=enc.value(2, 3, protocol_type="consumer", generation=1, protocol="range", leader="c-1",
                                  current_state_timestamp=1_732_200_000_000, members=[member])).get(timeout=30)
    producer.close()
    out = io.StringIO()
    settings = CaptureSettings(kafka_bootstrap, offsets_topic, poll_interval=1.0, traffic_interval=3.0)
    capture_offsets(settings, out, io.StringIO(), stop=until(
        out, lambda evs: sum(e["type"] == "traffic" and e["topic"] == null_key for e in evs) >= 2))
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["type"] for e in events[:2]] == ["partitions", "generation"]
    check_rates(events, group, keyed, null_key)

"""`rebalance capture --source offsets --once` end to end on the local broker: the multi-group history is
produced (encoded records) into an ordinary topic standing in for ``__consumer_offsets``; the capture must
emit exactly the expected events, in order per group, with partition counts from real Metadata requests."""

from __future__ import annotations

import io
import json
import uuid

import offsets_history as hist
import pytest
from kafka import KafkaProducer

from streaming.capture.capture import CaptureFailed, CaptureSettings, capture_offsets

pytestmark = pytest.mark.kafka

GROUP_PARTITION = {"orders": 0, "payments": 1, "legacy": 0, "clicks": 1, "connect-workers": 0, "too-short": 1,
                   "share-group": 1}


def _group_of(key: bytes) -> str:
    for g in sorted(GROUP_PARTITION, key=len, reverse=True):
        if g.encode() in key:
            return g
    raise AssertionError(key)


@pytest.fixture(scope="module")
def offsets_log(kafka_bootstrap: str) -> tuple[str, dict[str, str], list[tuple[int, int]]]:
    """(offsets topic, logical -> real topic names, (partition, offset) of each history record)."""
    from streaming.kafka.topics import ensure_topics

    suffix = uuid.uuid4().hex[:8]
    names = {t: f"{t}-{suffix}" for t in ("orders", "payments", "legacy", "clicks")}
    offsets_topic = f"offsets-{suffix}"
    ensure_topics(kafka_bootstrap, {offsets_topic: 2, names["orders"]: 3, names["payments"]: 4,
                                    names["legacy"]: 2})  # clicks: counts from its PartitionMetadata record
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all", linger_ms=0)
    positions = []
    try:
        for key, value in hist.history(names):
            meta = producer.send(offsets_topic, key=key, value=value, partition=GROUP_PARTITION[_group_of(key)],
                                 timestamp_ms=777).get(timeout=30)
            positions.append((meta.partition, meta.offset))
    finally:
        producer.close()
    return offsets_topic, names, positions


def _capture(bootstrap: str, topic: str, **kw) -> tuple[list[dict], str]:
    out, err = io.StringIO(), io.StringIO()
    capture_offsets(CaptureSettings(bootstrap, topic, once=True, **kw.pop("settings", {})), out, err, **kw)
    return [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


def test_capture_once_emits_the_expected_events_in_order_per_group(kafka_bootstrap, offsets_log) -> None:
    topic, names, positions = offsets_log
    events, progress = _capture(kafka_bootstrap, topic)
    per_group: dict[str, list[dict]] = {}
    for ev in events:
        source = ev.pop("source")
        assert source["topic"] == topic and (source["partition"], source["offset"]) in positions
        per_group.setdefault(ev["group"], []).append(ev)
    assert per_group == hist.expected_events(names)
    bad = positions[hist.UNDECODABLE_INDEX]
    assert f"undecodable record at {topic}/{bad[0]}@{bad[1]}: GroupMetadataValue.protocolType" in progress
    assert "2 offset commits" in progress and "1 non-consumer group records" in progress
    assert "--source describe" not in progress


def test_a_restarted_capture_writes_nothing_twice(kafka_bootstrap, offsets_log, tmp_path) -> None:
    from streaming.capture.capture import written_events, written_positions

    topic = offsets_log[0]
    full, _ = _capture(kafka_bootstrap, topic)
    path = tmp_path / "capture.jsonl"
    half = len(full) // 2
    path.write_text("".join(json.dumps(ev) + "\n" for ev in full[:half]) + '{"group": "torn')
    with open(path, "a") as f:
        rest, _ = _capture(kafka_bootstrap, topic, resume=written_positions(written_events(path)))
        for ev in rest:
            f.write(json.dumps(ev) + "\n")
    assert [json.loads(line) for line in path.read_text().splitlines()] == full


def test_groups_filter_and_strict(kafka_bootstrap, offsets_log) -> None:
    import re

    topic = offsets_log[0]
    events, _ = _capture(kafka_bootstrap, topic, settings={"groups": re.compile("^legacy$")})
    assert [ev["type"] for ev in events] == ["partitions", "generation"] and events[1]["group"] == "legacy"
    with pytest.raises(CaptureFailed, match="undecodable record"):
        _capture(kafka_bootstrap, topic, settings={"strict": True})


def test_missing_offsets_topic_is_a_clear_failure(kafka_bootstrap) -> None:
    with pytest.raises(CaptureFailed, match="does not exist"):
        _capture(kafka_bootstrap, f"no-such-topic-{uuid.uuid4().hex[:8]}")


def test_cli_capture_once_to_a_file_and_again(kafka_bootstrap, offsets_log, tmp_path, capsys) -> None:
    from streaming.cli.main import main

    topic = offsets_log[0]
    out = tmp_path / "history.jsonl"
    argv = ["capture", "--bootstrap", kafka_bootstrap, "--offsets-topic", topic, "--once", "--out", str(out)]
    assert main(argv) == 0
    first = out.read_text()
    assert [json.loads(line) for line in first.splitlines()] == _capture(kafka_bootstrap, topic)[0]
    assert "capture: " in capsys.readouterr().err
    assert main(argv) == 0  # continued: nothing new in the topic, nothing written twice
    assert out.read_text() == first
    assert main([*argv, "--groups", "("]) == 2
    assert "--groups" in capsys.readouterr().err


def test_an_offsets_topic_without_group_records_names_the_describe_source(kafka_bootstrap, unique_topic,
                                                                         tmp_path, capsys) -> None:
    """A broker that keeps its groups elsewhere (the local one writes nothing to __consumer_offsets): an offsets
    topic holding only an offset commit is said to hold no group records, and `--source describe` is named."""
    import coordinator_encoder as enc

    from streaming.cli.main import main

    topic = unique_topic("offsets", partitions=1)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all", linger_ms=0)
    try:
        producer.send(topic, key=enc.key(1, "orders", "orders", 0),
                      value=enc.value(1, 1, offset=10, metadata="", commit_timestamp=5)).get(timeout=30)
    finally:
        producer.close()
    out = tmp_path / "history.jsonl"
    assert main(["capture", "--bootstrap", kafka_bootstrap, "--offsets-topic", topic, "--once", "--out", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"capture: {topic} holds no group records (1 records read); if this broker keeps its groups elsewhere, " \
           "capture with --source describe (polls DescribeGroups)" in err, err
    assert out.read_text() == ""


def test_cli_capture_to_an_events_topic_exactly_once(kafka_bootstrap, offsets_log) -> None:
    """Two captures, records added in between: the events topic holds each event once, as a file would."""
    from streaming.cli.main import main
    from streaming.kafka.consumer import read_to_end
    from streaming.kafka.topics import ensure_topics

    _, names, _ = offsets_log
    topic, events_topic = f"offsets-{uuid.uuid4().hex[:8]}", f"captured-{uuid.uuid4().hex[:8]}"
    ensure_topics(kafka_bootstrap, {topic: 2})
    history = hist.history(names)
    argv = ["capture", "--bootstrap", kafka_bootstrap, "--offsets-topic", topic, "--once",
            "--events-topic", events_topic]
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all", linger_ms=0)
    try:
        for part in (history[:12], history[12:]):
            for key, value in part:
                producer.send(topic, key=key, value=value, partition=GROUP_PARTITION[_group_of(key)],
                              timestamp_ms=777).get(timeout=30)
            assert main(argv) == 0
    finally:
        producer.close()
    assert main(argv) == 0  # nothing new: nothing written
    records = read_to_end(kafka_bootstrap, events_topic)
    assert all(r.key == json.loads(r.value)["group"].encode() for r in records)
    per_group: dict[str, list[dict]] = {}
    for r in records:
        ev = json.loads(r.value)
        ev.pop("source")
        per_group.setdefault(ev["group"], []).append(ev)
    assert per_group == hist.expected_events(names)
    assert main([*argv, "--source", "describe"]) == 2

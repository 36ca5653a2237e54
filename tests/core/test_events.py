"""Parsing and validation of one membership event (docs/events-and-diffs.md §1), and the routing key."""

from __future__ import annotations

import json

import pytest

from streaming.core.config import Limits, PipelineConfig, parse_strategies
from streaming.core.events import DeleteTopic, InvalidEvent, Join, Leave, Partitions, Subscribe, group_key, parse_event


def ev(**fields: object) -> bytes:
    return json.dumps({"group": "g", **fields}).encode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (ev(type="leave", member="m"), "g"),
        (b'{"group": "g"}', "g"),  # routing only needs the group; validation happens in step()
        (b'{"group": ""}', ""),
        (b'{"group": 7}', ""),
        (b'{"type": "join"}', ""),
        (b"[1, 2]", ""),
        (b"not json", ""),
        (b"\xff\xfe{", ""),
        (None, ""),
        (b"[" * 100_000 + b"]" * 100_000, ""),  # nesting deep enough to exhaust the JSON parser's recursion
        (json.dumps({"group": "g", "pad": "x" * 2_000_000}).encode(), ""),  # oversized: not parsed
        (json.dumps({"group": "x" * 2_000}).encode(), ""),  # group id above max_name_chars
        (b'{"group": "g\\ud800"}', ""),  # a lone surrogate cannot be written as UTF-8
    ],
)
def test_group_key_never_raises(value: bytes | None, expected: str) -> None:
    assert group_key(value, b"some-key") == expected


def test_group_key_ignores_the_kafka_key() -> None:
    assert group_key(ev(type="leave", member="m"), b"other") == "g"
    assert group_key(b"junk", b"g") == ""


def test_parse_each_type() -> None:
    join = parse_event(ev(type="join", member="m", topics=["a", "b", "a"], rack="", instance_id="i-1",
                          partitions={"a": 3}, partition_racks={"a": [["r1", None], ["r2"]]}, ts=5, extra=1))
    assert isinstance(join, Join)
    assert (join.member, join.topics, join.rack, join.instance_id, join.ts) == ("m", ("a", "b"), None, "i-1", 5)
    assert join.metadata is not None
    assert join.metadata.partitions == {"a": 3}
    assert join.metadata.partition_racks == {"a": [["r1"], ["r2"]]}
    assert parse_event(ev(type="join", member="m", topics=[])).metadata is None
    assert parse_event(ev(type="leave", member="m")) == Leave("g", "m", None)
    assert parse_event(ev(type="subscribe", member="m", topics=["x"], ts=None)) == Subscribe("g", "m", ("x",), None)
    part = parse_event(ev(type="partitions", partitions={"x": 1, "y": 2}))
    assert isinstance(part, Partitions)
    assert list(part.metadata.partitions) == ["x", "y"]
    assert parse_event(ev(type="delete_topic", topic="x", ts=0)) == DeleteTopic("g", "x", 0)


LIMITS = Limits(max_name_chars=10, max_topics_per_subscription=2, max_partitions_per_topic=100,
                max_topics_per_group=2, max_replicas_per_partition=2, max_event_bytes=10_000)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "no value"),
        (b"x" * 10_001, "exceeds the limit"),
        (b"\xff", "not UTF-8"),
        (b"{", "invalid JSON"),
        (b"[]", "not a JSON object but an array"),
        (b'"g"', "not a JSON object but a string"),
        (b'{"type": "leave", "member": "m"}', "field 'group': missing"),
        (b'{"group": 1, "type": "leave", "member": "m"}', "field 'group': expected a string"),
        (b'{"group": "", "type": "leave"}', "field 'group': must not be empty"),
        (ev(), "field 'type': missing"),
        (ev(type="explode"), "unknown type 'explode'"),
        (ev(type=3), "field 'type': a number"),
        (ev(type="leave"), "field 'member': missing"),
        (ev(type="leave", member=""), "field 'member': must not be empty"),
        (ev(type="leave", member="m" * 11), "exceed the limit of 10"),
        (b'{"group": "g", "type": "leave", "member": "\\udc00"}', "field 'member': contains an unpaired"),
        (b'{"group": "g", "type": "join", "member": "m", "topics": ["\\ud83d"]}', "field 'topics[0]': contains"),
        (ev(type="join", member="m"), "field 'topics': missing"),
        (ev(type="join", member="m", topics="a"), "field 'topics': expected an array"),
        (ev(type="join", member="m", topics=["a", 1]), "field 'topics[1]': expected a string"),
        (ev(type="join", member="m", topics=["a", "b", "c"]), "3 topics exceed the limit of 2"),
        (ev(type="join", member="m", topics=[], rack=5), "field 'rack'"),
        (ev(type="join", member="m", topics=[], instance_id=""), "field 'instance_id': must not be empty"),
        (ev(type="join", member="m", topics=[], partition_racks={}), "given without 'partitions'"),
        (ev(type="subscribe", member="m", topics=None), "field 'topics': missing"),
        (ev(type="partitions"), "field 'partitions': missing"),
        (ev(type="partitions", partitions=[1]), "field 'partitions': expected an object"),
        (ev(type="partitions", partitions={"a": 0}), "partition count must be >= 1"),
        (ev(type="partitions", partitions={"a": -3}), "partition count must be >= 1"),
        (ev(type="partitions", partitions={"a": 101}), "exceeds the limit of 100"),
        (ev(type="partitions", partitions={"a": 1.5}), "expected an integer partition count"),
        (ev(type="partitions", partitions={"a": True}), "expected an integer partition count"),
        (ev(type="partitions", partitions={"a": 1, "b": 1, "c": 1}), "3 topics exceed the limit of 2"),
        (ev(type="partitions", partitions={"a": 1}, partition_racks=[]), "field 'partition_racks': expected"),
        (ev(type="partitions", partitions={"a": 1}, partition_racks={"a": "r"}), "partition_racks.a"),
        (ev(type="partitions", partitions={"a": 1}, partition_racks={"a": [[1]]}), "partition_racks.a[0]"),
        (ev(type="partitions", partitions={"a": 1}, partition_racks={"a": [["a", "b", "c"]]}), "3 replicas"),
        (ev(type="delete_topic"), "field 'topic': missing"),
        (ev(type="leave", member="m", ts="now"), "field 'ts': expected an integer"),
        (ev(type="leave", member="m", ts=1.5), "field 'ts': expected an integer"),
        (ev(type="leave", member="m", ts=-1), "field 'ts': out of range"),
    ],
)
def test_invalid_events_name_the_problem(value: bytes | None, reason: str) -> None:
    with pytest.raises(InvalidEvent) as info:
        parse_event(value, LIMITS)
    assert reason in info.value.reason


def test_invalid_event_carries_the_group_when_known() -> None:
    with pytest.raises(InvalidEvent) as info:
        parse_event(ev(type="leave"))
    assert info.value.group == "g"
    with pytest.raises(InvalidEvent) as info:
        parse_event(b"{}")
    assert info.value.group is None


def test_parse_strategies() -> None:
    assert parse_strategies("all") == PipelineConfig(strategies=parse_strategies("all")).strategies
    assert parse_strategies(" range , sticky,range") == ("range", "sticky")
    with pytest.raises(ValueError, match="'nope'"):
        parse_strategies("range,nope")
    with pytest.raises(ValueError, match="strategies"):
        parse_strategies(" , ")
    with pytest.raises(ValueError, match="strategies"):
        PipelineConfig(strategies=("range", "range"))
    with pytest.raises(ValueError, match=r"limits\.max_event_bytes"):
        Limits(max_event_bytes=0)

"""The offsets-topic decoder: real broker records field for field, hand-built bytes for every version of every
record type, a cross-check against kafka-python's generated structs, and fuzzing (only our error, no hang)."""

from __future__ import annotations

import base64
import random
import re
import struct
import uuid
from pathlib import Path
from typing import Any

import coordinator_encoder as enc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from kafka.structs import TopicPartition

from streaming.capture.coordinator_records import (
    ClassicMemberMetadata,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataValue,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataValue,
    CoordinatorRecordError,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    OtherKey,
    StickyUserData,
    Subscription,
    TopicMetadata,
    decode_assignment,
    decode_cooperative_user_data,
    decode_key,
    decode_sticky_user_data,
    decode_subscription,
    decode_value,
)

FIXTURES = Path(__file__).parent / "fixtures" / "consumer-offsets"  # real broker records, see its README


# ------------------------------------------------------------------ real records (Rust Debug expectations)

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+)|(?P<name>[A-Za-z_]\w*)|(?P<p>[{}\[\]:,]))')


def parse_rust_debug(text: str) -> Any:
    """`Name { field: value, ... }` -> dict, `[a, b,]` -> list, strings, integers, booleans."""
    tokens = [(m.lastgroup, m.group(m.lastgroup)) for m in _TOKEN.finditer(text)]
    pos = 0

    def parse() -> Any:
        nonlocal pos
        kind, tok = tokens[pos]
        pos += 1
        if kind == "str":
            return tok[1:-1].encode().decode("unicode_escape")
        if kind == "num":
            return int(tok)
        if kind == "name":
            if tok in ("true", "false"):
                return tok == "true"
            assert tokens[pos][1] == "{", tok
            pos += 1
            out = {}
            while tokens[pos][1] != "}":
                name = tokens[pos][1]
                assert tokens[pos + 1][1] == ":"
                pos += 2
                out[name] = parse()
                if tokens[pos][1] == ",":
                    pos += 1
            pos += 1
            return out
        assert tok == "[", tok
        items = []
        while tokens[pos][1] != "]":
            items.append(parse())
            if tokens[pos][1] == ",":
                pos += 1
        pos += 1
        return items

    return parse()


def _tps(partitions: Any) -> list:
    return [(tp["topic"], list(tp["partitions"])) for tp in partitions]


def _fixture_ids(kind: str) -> list[str]:
    return sorted(p.stem for p in (FIXTURES / kind).glob("*.key"))


@pytest.mark.parametrize("name", _fixture_ids("group_metadata"))
def test_real_group_metadata_records_decode_field_for_field(name: str) -> None:
    d = FIXTURES / "group_metadata"
    want = parse_rust_debug((d / f"{name}.ts_int.fmt").read_text())
    key = decode_key((d / f"{name}.key").read_bytes())
    value = decode_value(key, (d / f"{name}.payload").read_bytes())
    assert want["message_version"] == 2 and not want["is_tombstone"]
    assert key == GroupMetadataKey(want["group"])
    assert isinstance(value, GroupMetadataValue)
    assert value.version == want["schema_version"]
    assert value.protocol_type == want["protocol_type"]
    assert value.generation == want["generation"]
    assert (value.protocol or "", value.leader or "") == (want["protocol"], want["leader"])  # Rust prints null ""
    assert value.current_state_timestamp == want["current_state_timestamp"]
    assert len(value.members) == len(want["members"])
    for m, w in zip(value.members, want["members"], strict=True):
        assert (m.member_id, m.group_instance_id or "", m.client_id, m.client_host) == (
            w["id"], w["group_instance_id"], w["client_id"], w["client_host"])
        assert (m.rebalance_timeout, m.session_timeout) == (w["rebalance_timeout"], w["session_timeout"])
        sub, ws = decode_subscription(m.subscription), w["subscription"]
        assert sub.version == ws["schema_version"]
        assert list(sub.topics) == ws["subscribed_topics"]
        assert list(sub.user_data or b"") == ws["user_data"]
        assert [(t, list(p)) for t, p in sub.owned_partitions] == _tps(ws["owned_topic_partitions"])
        assert sub.generation_id == ws["generation_id"]
        assert (sub.rack_id or "") == ws["rack_id"]
        asg, wa = decode_assignment(m.assignment), w["assignment"]
        assert asg.version == wa["schema_version"]
        assert [(t, list(p)) for t, p in asg.partitions] == _tps(wa["assigned_topic_partitions"])
        assert list(asg.user_data or b"") == wa["user_data"]


@pytest.mark.parametrize("name", _fixture_ids("offset_commit"))
def test_real_offset_commit_records_decode_field_for_field(name: str) -> None:
    d = FIXTURES / "offset_commit"
    want = parse_rust_debug((d / f"{name}.ts_int.fmt").read_text())
    key = decode_key((d / f"{name}.key").read_bytes())
    value = decode_value(key, (d / f"{name}.payload").read_bytes())
    assert key == OffsetCommitKey(want["group"], want["topic"], want["partition"])
    assert value == OffsetCommitValue(want["schema_version"], want["offset"], want["leader_epoch"], want["metadata"],
                                      want["commit_timestamp"], want["expire_timestamp"])


def test_the_real_empty_group_has_no_members_and_null_protocol() -> None:
    d = FIXTURES / "group_metadata"
    (empty,) = [p for p in d.glob("*.payload") if p.stat().st_size == 32]
    value = decode_value(GroupMetadataKey("g"), empty.read_bytes())
    assert value.members == () and value.protocol is None and value.leader is None


# --------------------------------------------------------------------------------- hand-built bytes


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(*vs: int) -> bytes:
    return struct.pack(f">{len(vs)}i", *vs)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s(v: str | None) -> bytes:
    return i16(-1) if v is None else i16(len(v.encode())) + v.encode()


def b(v: bytes | None) -> bytes:
    return i32(-1) if v is None else i32(len(v)) + v


def uv(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def cs(v: str | None) -> bytes:
    return uv(0) if v is None else uv(len(v.encode()) + 1) + v.encode()


def cb(v: bytes) -> bytes:
    return uv(len(v) + 1) + v


def arr(items: list[bytes]) -> bytes:
    return i32(len(items)) + b"".join(items)


def carr(items: list[bytes]) -> bytes:
    return uv(len(items) + 1) + b"".join(items)


NO_TAGS = uv(0)
UNKNOWN_TAG = uv(1) + uv(7) + uv(3) + b"xyz"  # one tagged field the schema does not know: skipped
TID = "AAECAwQFBgcICQoLDA0ODw"  # topic id 00010203-0405-0607-0809-0a0b0c0d0e0f as Kafka prints it
TID_BYTES = bytes(range(16))


@pytest.mark.parametrize(("data", "want"), [
    (i16(0) + s("g") + s("t") + i32(3), OffsetCommitKey("g", "t", 3)),
    (i16(1) + s("g") + s("t") + i32(3), OffsetCommitKey("g", "t", 3)),
    (i16(2) + s("grp"), GroupMetadataKey("grp")),
    (i16(3) + s("g"), ConsumerGroupKey(3, "g", None)),
    (i16(4) + s("g"), ConsumerGroupKey(4, "g", None)),
    (i16(5) + s("g") + s("m"), ConsumerGroupKey(5, "g", "m")),
    (i16(6) + s("g"), ConsumerGroupKey(6, "g", None)),
    (i16(7) + s("g") + s("m"), ConsumerGroupKey(7, "g", "m")),
    (i16(8) + s("g") + s("m"), ConsumerGroupKey(8, "g", "m")),
    (i16(9) + s("share-group"), OtherKey(9)),
])
def test_every_key_type(data: bytes, want: Any) -> None:
    assert decode_key(data) == want
    assert decode_value(want, None) is None  # a tombstone


@pytest.mark.parametrize(("version", "body", "want"), [
    (0, i64(5) + s("m") + i64(100), OffsetCommitValue(0, 5, -1, "m", 100, -1)),
    (1, i64(5) + s("m") + i64(100) + i64(200), OffsetCommitValue(1, 5, -1, "m", 100, 200)),
    (2, i64(5) + s("") + i64(100), OffsetCommitValue(2, 5, -1, "", 100, -1)),
    (3, i64(5) + i32(7) + s("m") + i64(100), OffsetCommitValue(3, 5, 7, "m", 100, -1)),
    (4, i64(5) + i32(7) + cs("m") + i64(100) + UNKNOWN_TAG, OffsetCommitValue(4, 5, 7, "m", 100, -1)),
])
def test_offset_commit_value_versions(version: int, body: bytes, want: OffsetCommitValue) -> None:
    assert decode_value(OffsetCommitKey("g", "t", 0), i16(version) + body) == want


def _classic_member(v: int) -> bytes:
    c = v >= 4
    st_ = cs if c else s
    by = cb if c else b
    out = st_("m-1")
    if v >= 3:
        out += st_("inst-1")
    out += st_("client") + st_("/10.0.0.1")
    if v >= 1:
        out += i32(30000)
    out += i32(10000) + by(b"SUB") + by(b"ASG")
    return out + (UNKNOWN_TAG if c else b"")


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_group_metadata_value_versions(version: int) -> None:
    c = version >= 4
    st_ = cs if c else s
    body = st_("consumer") + i32(12) + st_("range") + st_("m-1")
    if version >= 2:
        body += i64(1_700_000_000_000)
    body += (carr if c else arr)([_classic_member(version), _classic_member(version)])
    body += UNKNOWN_TAG if c else b""
    got = decode_value(GroupMetadataKey("g"), i16(version) + body)
    member = MemberMetadata("m-1", "inst-1" if version >= 3 else None, "client", "/10.0.0.1",
                            30000 if version >= 1 else -1, 10000, b"SUB", b"ASG")
    assert got == GroupMetadataValue(version, "consumer", 12, "range", "m-1",
                                     1_700_000_000_000 if version >= 2 else -1, (member, member))


def test_group_metadata_value_null_protocol_and_leader_flexible() -> None:
    data = i16(4) + cs("consumer") + i32(3) + cs(None) + cs(None) + i64(-1) + carr([]) + NO_TAGS
    assert decode_value(GroupMetadataKey("g"), data) == GroupMetadataValue(4, "consumer", 3, None, None, -1, ())


def _owned() -> bytes:
    return arr([s("t") + i32(2, 0, 1)])


@pytest.mark.parametrize(("version", "body", "want"), [
    (0, arr([s("a"), s("b")]) + b(None), Subscription(0, ("a", "b"), None, (), -1, None)),
    (1, arr([s("a")]) + b(b"u") + _owned(), Subscription(1, ("a",), b"u", (("t", (0, 1)),), -1, None)),
    (2, arr([s("a")]) + b(b"") + _owned() + i32(9), Subscription(2, ("a",), b"", (("t", (0, 1)),), 9, None)),
    (3, arr([s("a")]) + b(None) + _owned() + i32(9) + s("az-1"),
     Subscription(3, ("a",), None, (("t", (0, 1)),), 9, "az-1")),
    (3, arr([s("a")]) + b(None) + arr([]) + i32(-1) + s(None), Subscription(3, ("a",), None, (), -1, None)),
    # a newer version is read with the newest known format, extra bytes ignored (ConsumerProtocol does so)
    (7, arr([s("a")]) + b(None) + arr([]) + i32(4) + s("r") + b"future",
     Subscription(7, ("a",), None, (), 4, "r")),
])
def test_subscription_versions(version: int, body: bytes, want: Subscription) -> None:
    assert decode_subscription(i16(version) + body) == want


@pytest.mark.parametrize("version", [0, 1, 2, 5])
def test_assignment_versions(version: int) -> None:
    got = decode_assignment(i16(version) + arr([s("a") + i32(2, 3, 4), s("b") + i32(0)]) + b(b"ud"))
    assert (got.version, got.partitions, got.user_data) == (version, (("a", (3, 4)), ("b", ())), b"ud")


def test_sticky_user_data_java_v0_v1_and_kafka_python_layouts() -> None:
    prev = arr([s("t") + i32(2, 0, 3)])
    want_partitions = (("t", (0, 3)),)
    assert decode_sticky_user_data(prev + i32(6)) == StickyUserData(want_partitions, 6)  # Java V1
    assert decode_sticky_user_data(prev) == StickyUserData(want_partitions, None)  # Java V0
    assert decode_sticky_user_data(i16(1) + prev + i32(6)) == StickyUserData(want_partitions, 6)  # kafka-python 3
    assert decode_sticky_user_data(i16(0) + prev) == StickyUserData(want_partitions, None)
    assert decode_cooperative_user_data(i32(11)) == 11


def test_sticky_user_data_as_kafka_python_writes_it() -> None:
    sub = StickyPartitionAssignor._metadata(["t"], [TopicPartition("t", 2), TopicPartition("u", 0)], 5).encode()
    got = decode_subscription(sub)
    assert got.topics == ("t",)
    assert decode_sticky_user_data(got.user_data) == StickyUserData((("t", (2,)), ("u", (0,))), 5)


CLASSIC = i8(1) + i32(10) + carr([cs("range") + cb(b"xy") + NO_TAGS]) + NO_TAGS  # nullable struct: marker 1


def _tid_partitions(parts: list[int], tags: bytes = NO_TAGS) -> bytes:
    return TID_BYTES + carr([i32(p) for p in parts]) + tags


@pytest.mark.parametrize(("record_type", "body", "want"), [
    (3, i32(14) + UNKNOWN_TAG, ConsumerGroupMetadataValue(14)),
    (4, carr([TID_BYTES + cs("orders") + i32(3)
              + carr([i32(0) + carr([cs("az-1"), cs("az-2")]) + NO_TAGS]) + NO_TAGS]) + NO_TAGS,
     ConsumerGroupPartitionMetadataValue((TopicMetadata(TID, "orders", 3, ((0, ("az-1", "az-2")),)),))),
    (5, cs(None) + cs("az-1") + cs("client") + cs("/h") + carr([cs("a"), cs("b")]) + cs(None) + i32(45000)
     + cs("range") + NO_TAGS,
     ConsumerGroupMemberMetadataValue(None, "az-1", "client", "/h", ("a", "b"), None, 45000, "range", None)),
    (5, cs("i") + cs(None) + cs("c") + cs("/h") + carr([]) + cs("t.*") + i32(-1) + cs(None)
     + uv(2) + uv(0) + uv(len(CLASSIC)) + CLASSIC + uv(3) + uv(1) + b"z",
     ConsumerGroupMemberMetadataValue("i", None, "c", "/h", (), "t.*", -1, None,
                                      ClassicMemberMetadata(10, (("range", b"xy"),)))),
    (6, i32(15) + NO_TAGS, ConsumerGroupTargetAssignmentMetadataValue(15)),
    (7, carr([_tid_partitions([2, 0], UNKNOWN_TAG)]) + NO_TAGS,
     ConsumerGroupTargetAssignmentMemberValue(((TID, (2, 0)),))),
    (8, i32(5) + i32(4) + i8(2) + carr([_tid_partitions([1])]) + carr([_tid_partitions([])]) + NO_TAGS,
     ConsumerGroupCurrentMemberAssignmentValue(5, 4, 2, ((TID, (1,)),), ((TID, ()),))),
])
def test_consumer_group_record_values(record_type: int, body: bytes, want: Any) -> None:
    key = ConsumerGroupKey(record_type, "g", "m" if record_type in (5, 7, 8) else None)
    assert decode_value(key, i16(0) + body) == want


# ------------------------------------------------------------------------------------------- errors


MEMBER_PREFIX = i16(3) + s("consumer") + i32(1) + s("range") + s("m") + i64(0) + i32(1) + s("m-1") + s(None)


@pytest.mark.parametrize(("key", "data", "field", "offset"), [
    (GroupMetadataKey("g"), i16(5) + s("consumer"), "GroupMetadataValue.version", 0),
    (GroupMetadataKey("g"), i16(-1), "GroupMetadataValue.version", 0),
    (OffsetCommitKey("g", "t", 0), i16(9), "OffsetCommitValue.version", 0),
    (ConsumerGroupKey(3, "g", None), i16(1) + i32(1) + NO_TAGS, "ConsumerGroupMetadataValue.version", 0),
    (GroupMetadataKey("g"), MEMBER_PREFIX + s(None) + bytes(20), "GroupMetadataValue.members[0].clientId",
     len(MEMBER_PREFIX)),  # groupInstanceId may be null, clientId may not
    (GroupMetadataKey("g"), i16(0) + s("consumer") + b"\x00", "GroupMetadataValue.generation", 12),
    (GroupMetadataKey("g"), i16(0) + s(None), "GroupMetadataValue.protocolType", 2),
])
def test_bad_bytes_name_the_field_and_offset(key: Any, data: bytes, field: str, offset: int) -> None:
    with pytest.raises(CoordinatorRecordError) as err:
        decode_value(key, data)
    assert (err.value.field, err.value.offset) == (field, offset)
    assert field in str(err.value) and f"byte offset {err.value.offset}" in str(err.value)


def test_truncated_member_names_the_member_field_and_its_offset() -> None:
    data = MEMBER_PREFIX + s("client") + s("/10.0.0.1") + i32(1, 2)  # ends before the subscription bytes
    with pytest.raises(CoordinatorRecordError) as err:
        decode_value(GroupMetadataKey("g"), data)
    assert (err.value.field, err.value.offset) == ("GroupMetadataValue.members[0].subscription", len(data))


def test_trailing_bytes_and_bad_utf8_are_errors() -> None:
    with pytest.raises(CoordinatorRecordError, match="trailing"):
        decode_key(i16(2) + s("g") + b"!")
    with pytest.raises(CoordinatorRecordError, match=r"key\.group at byte offset 4: invalid UTF-8"):
        decode_key(i16(2) + i16(1) + b"\xff")
    with pytest.raises(CoordinatorRecordError, match="varint"):
        decode_value(ConsumerGroupKey(3, "g", None), i16(0) + i32(1) + b"\xff\xff\xff\xff\xff\x01")


# ------------------------------------------------------------ cross-check: kafka-python's generated structs

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
ints = st.integers(-(2**31), 2**31 - 1)
longs = st.integers(-(2**63), 2**63 - 1)
tps = st.lists(st.tuples(names, st.lists(st.integers(0, 2**31 - 1), max_size=5)), max_size=4)
topic_ids = st.uuids()
tid_tps = st.lists(st.tuples(topic_ids, st.lists(st.integers(0, 2**31 - 1), max_size=5)), max_size=4)


def _kafka_id(u: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")


@settings(max_examples=60, deadline=None)
@given(version=st.integers(0, 4), protocol_type=names, generation=ints, protocol=st.none() | names,
       leader=st.none() | names, ts=longs, members=st.lists(st.tuples(
           names, st.none() | names, names, names, ints, ints, st.binary(max_size=20), st.binary(max_size=20)),
           max_size=3))
def test_group_metadata_value_matches_kafka_python(version, protocol_type, generation, protocol, leader, ts,
                                                    members) -> None:
    data = enc.value(2, version, protocol_type=protocol_type, generation=generation, protocol=protocol,
                     leader=leader, current_state_timestamp=ts, members=[
                         enc.member(member_id=m[0], group_instance_id=m[1], client_id=m[2], client_host=m[3],
                                    rebalance_timeout=m[4], session_timeout=m[5], subscription=m[6],
                                    assignment=m[7]) for m in members])
    got = decode_value(GroupMetadataKey("g"), data)
    assert got == GroupMetadataValue(version, protocol_type, generation, protocol, leader,
                                     ts if version >= 2 else -1, tuple(
                                         MemberMetadata(m[0], m[1] if version >= 3 else None, m[2], m[3],
                                                        m[4] if version >= 1 else -1, m[5], m[6], m[7])
                                         for m in members))


@settings(max_examples=40, deadline=None)
@given(version=st.integers(0, 4), offset=longs, epoch=ints, metadata=names, commit=longs, expire=longs)
def test_offset_commit_value_matches_kafka_python(version, offset, epoch, metadata, commit, expire) -> None:
    data = enc.value(0, version, offset=offset, leader_epoch=epoch, metadata=metadata, commit_timestamp=commit,
                     expire_timestamp=expire)
    assert decode_value(OffsetCommitKey("g", "t", 0), data) == OffsetCommitValue(
        version, offset, epoch if version >= 3 else -1, metadata, commit, expire if version == 1 else -1)


@settings(max_examples=60, deadline=None)
@given(version=st.integers(0, 3), topics=st.lists(names, max_size=4), user_data=st.none() | st.binary(max_size=9),
       owned=tps, generation=ints, rack=st.none() | names)
def test_subscription_matches_kafka_python(version, topics, user_data, owned, generation, rack) -> None:
    got = decode_subscription(enc.subscription(version, topics, user_data, owned, generation, rack))
    assert got == Subscription(version, tuple(topics), user_data,
                               tuple((t, tuple(p)) for t, p in owned) if version >= 1 else (),
                               generation if version >= 2 else -1, rack if version >= 3 else None)


@settings(max_examples=30, deadline=None)
@given(version=st.integers(0, 2), partitions=tps, user_data=st.none() | st.binary(max_size=9))
def test_assignment_matches_kafka_python(version, partitions, user_data) -> None:
    got = decode_assignment(enc.assignment(version, partitions, user_data))
    assert (got.version, got.partitions, got.user_data) == (
        version, tuple((t, tuple(p)) for t, p in partitions), user_data)


@settings(max_examples=40, deadline=None)
@given(epoch=ints, topics=st.lists(st.tuples(topic_ids, names, ints, st.lists(
    st.tuples(ints, st.lists(names, max_size=3)), max_size=3)), max_size=3),
       member=st.tuples(st.none() | names, st.none() | names, names, names, st.lists(names, max_size=3),
                        st.none() | names, ints, st.none() | names,
                        st.none() | st.tuples(ints, st.lists(st.tuples(names, st.binary(max_size=8)), max_size=2))),
       target=tid_tps, current=st.tuples(ints, ints, st.integers(-128, 127), tid_tps, tid_tps))
def test_consumer_group_records_match_kafka_python(epoch, topics, member, target, current) -> None:
    def key(t: int) -> ConsumerGroupKey:
        return ConsumerGroupKey(t, "g", "m" if t in (5, 7, 8) else None)

    assert decode_value(key(3), enc.value(3, 0, epoch=epoch)) == ConsumerGroupMetadataValue(epoch)
    assert decode_value(key(6), enc.value(6, 0, assignment_epoch=epoch)) == \
        ConsumerGroupTargetAssignmentMetadataValue(epoch)
    pm = enc.struct_class("ConsumerGroupPartitionMetadataValue")
    assert decode_value(key(4), enc.value(4, 0, topics=[
        pm.TopicMetadata(topic_id=u, topic_name=n, num_partitions=c, partition_metadata=[
            pm.TopicMetadata.PartitionMetadata(partition=p, racks=r) for p, r in racks])
        for u, n, c, racks in topics])) == ConsumerGroupPartitionMetadataValue(tuple(
            TopicMetadata(_kafka_id(u), n, c, tuple((p, tuple(r)) for p, r in racks)) for u, n, c, racks in topics))
    mm = enc.struct_class("ConsumerGroupMemberMetadataValue")
    instance, rack, client, host, subscribed, regex, timeout, assignor, classic = member
    fields = dict(instance_id=instance, rack_id=rack, client_id=client, client_host=host,
                  subscribed_topic_names=subscribed, subscribed_topic_regex=regex, rebalance_timeout_ms=timeout,
                  server_assignor=assignor)
    if classic is not None:
        fields["classic_member_metadata"] = mm.ClassicMemberMetadata(
            session_timeout_ms=classic[0], supported_protocols=classic[1])
    assert decode_value(key(5), enc.value(5, 0, **fields)) == ConsumerGroupMemberMetadataValue(
        instance, rack, client, host, tuple(subscribed), regex, timeout, assignor,
        None if classic is None else ClassicMemberMetadata(classic[0], tuple(classic[1])))

    def ids(v: list) -> tuple:
        return tuple((_kafka_id(u), tuple(p)) for u, p in v)

    assert decode_value(key(7), enc.value(7, 0, topic_partitions=target)) == \
        ConsumerGroupTargetAssignmentMemberValue(ids(target))
    assert decode_value(key(8), enc.value(8, 0, member_epoch=current[0], previous_member_epoch=current[1],
                                          state=current[2], assigned_partitions=current[3],
                                          partitions_pending_revocation=current[4])) == \
        ConsumerGroupCurrentMemberAssignmentValue(current[0], current[1], current[2], ids(current[3]),
                                                  ids(current[4]))


# ----------------------------------------------------------------------------------------------- fuzz


STICKY_V1 = arr([s("t") + i32(1, 1)]) + i32(3)


def _corpus() -> list[tuple[bytes, bytes]]:
    """(key, value) pairs of every record type: the real fixtures plus encoded ones."""
    pairs = [((d / f"{n}.key").read_bytes(), (d / f"{n}.payload").read_bytes())
             for d in (FIXTURES / "group_metadata", FIXTURES / "offset_commit") for n in _fixture_ids(d.name)]
    u = uuid.UUID(bytes=TID_BYTES)
    member = enc.member(member_id="m", group_instance_id="i", client_id="c", client_host="h", rebalance_timeout=1,
                        session_timeout=2, subscription=enc.subscription(3, ["t"], STICKY_V1, [("t", [1])], 3, "r"),
                        assignment=enc.assignment(1, [("t", [0, 1])]))
    for v in range(5):
        pairs.append((enc.key(2, "g"), enc.value(2, v, protocol_type="consumer", generation=1, protocol="range",
                                                 leader="m", current_state_timestamp=1, members=[member, member])))
        pairs.append((enc.key(1, "g", "t", 0), enc.value(1, v, offset=1, leader_epoch=2, metadata="x",
                                                         commit_timestamp=3, expire_timestamp=4)))
    mm = enc.struct_class("ConsumerGroupMemberMetadataValue")
    pm = enc.struct_class("ConsumerGroupPartitionMetadataValue")
    pairs += [
        (enc.key(3, "g"), enc.value(3, 0, epoch=4)),
        (enc.key(4, "g"), enc.value(4, 0, topics=[pm.TopicMetadata(
            topic_id=u, topic_name="t", num_partitions=2,
            partition_metadata=[pm.TopicMetadata.PartitionMetadata(partition=0, racks=["a"])])])),
        (enc.key(5, "g", "m"), enc.value(5, 0, instance_id=None, rack_id="r", client_id="c", client_host="h",
                                         subscribed_topic_names=["t"], subscribed_topic_regex=None,
                                         rebalance_timeout_ms=1, server_assignor="uniform",
                                         classic_member_metadata=mm.ClassicMemberMetadata(
                                             session_timeout_ms=1, supported_protocols=[("range", b"ab")]))),
        (enc.key(6, "g"), enc.value(6, 0, assignment_epoch=4)),
        (enc.key(7, "g", "m"), enc.value(7, 0, topic_partitions=[(u, [0, 1])])),
        (enc.key(8, "g", "m"), enc.value(8, 0, member_epoch=4, previous_member_epoch=3, state=0,
                                         assigned_partitions=[(u, [0])], partitions_pending_revocation=[(u, [1])])),
    ]
    return pairs


def _decode_all(key_bytes: bytes, value_bytes: bytes) -> None:
    key = decode_key(key_bytes)
    value = decode_value(key, value_bytes)
    if isinstance(value, GroupMetadataValue):
        for m in value.members:
            sub = decode_subscription(m.subscription)
            decode_assignment(m.assignment)
            if sub.user_data:
                decode_sticky_user_data(sub.user_data)


def test_fuzz_truncations_and_bit_flips_raise_only_the_decoder_error() -> None:
    rng = random.Random(848)
    corpus = _corpus()
    for key_bytes, value_bytes in corpus:
        _decode_all(key_bytes, value_bytes)  # the unmodified records decode
    outcomes = {"ok": 0, "error": 0}
    for _ in range(6_000):
        key_bytes, value_bytes = rng.choice(corpus)
        mutate_key = rng.random() < 0.2
        target = bytearray(key_bytes if mutate_key else value_bytes)
        if rng.random() < 0.4:
            del target[rng.randrange(len(target)):]
        else:
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(target))
                target[i] ^= 1 << rng.randrange(8)
        try:
            if mutate_key:
                _decode_all(bytes(target), value_bytes)
            else:
                _decode_all(key_bytes, bytes(target))
            outcomes["ok"] += 1
        except CoordinatorRecordError as err:
            assert err.offset >= 0 and err.field
            outcomes["error"] += 1
    assert outcomes["error"] > 1000 and outcomes["ok"] > 50

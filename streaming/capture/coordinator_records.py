"""Decoder of the group coordinator's records in the offsets topic (``__consumer_offsets``).

Pure functions over bytes, written from Kafka's message schemas (apache/kafka
``group-coordinator/src/main/resources/common/message/*.json`` and
``clients/src/main/resources/common/message/ConsumerProtocol{Subscription,Assignment}.json``):

- a record key is an int16 record type followed by that type's key struct: 0/1 OffsetCommit, 2 GroupMetadata
  (classic groups), 3-8 the KIP-848 consumer-group records (group epoch, partition metadata, member metadata,
  target assignment epoch, target assignment of a member, current assignment of a member); other types
  (share and streams groups, regular expressions, ...) decode to `OtherKey`;
- a record value is an int16 version followed by the value struct; a missing value is a tombstone (`None`);
- versions from each value's ``flexibleVersions`` on use compact strings/arrays/bytes (unsigned varint length
  + 1, 0 = null) and end every struct with tagged fields, which are skipped unless named in the schema.

Why our own decoder instead of kafka-python's generated structs: kafka-python ships the consumer protocol's
schemas but none of the coordinator's record schemas, its decoders raise untyped errors without a position,
and it silently decodes any newer version as its latest. Here every failure is one `CoordinatorRecordError`
naming the field and the byte offset, and unknown record versions are refused - except for the consumer
protocol's Subscription and Assignment, which Kafka itself reads with the newest format it knows
(``ConsumerProtocol.checkSubscriptionVersion``), as we do.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from struct import Struct, unpack_from
from typing import NoReturn

_I8 = Struct(">b")
_I16 = Struct(">h")
_I32 = Struct(">i")
_I64 = Struct(">q")
_UUIDS: dict[bytes, str] = {}  # topic id bytes -> Kafka's text form

TopicPartitions = tuple[tuple[str, tuple[int, ...]], ...]  # ((topic, (partition, ...)), ...) in record order
TopicIdPartitions = tuple[tuple[str, tuple[int, ...]], ...]  # ((topic id, (partition, ...)), ...)


class CoordinatorRecordError(ValueError):
    """Bytes that are not a valid coordinator record: truncated, ill-formed, or of an unknown version."""

    def __init__(self, field: str, offset: int, reason: str) -> None:
        super().__init__(f"{field} at byte offset {offset}: {reason}")
        self.field = field
        self.offset = offset
        self.reason = reason


class _Reader:
    """A cursor over one byte string; `where` prefixes the field names in errors (e.g. ``members[2]``)."""

    __slots__ = ("buf", "end", "pos", "where")

    def __init__(self, buf: bytes, where: str, pos: int = 0, end: int | None = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end
        self.where = where

    def fail(self, field: str, reason: str, at: int | None = None) -> NoReturn:
        raise CoordinatorRecordError(f"{self.where}.{field}", self.pos if at is None else at, reason)

    def _short(self, n: int, field: str) -> NoReturn:
        self.fail(field, f"needs {n} bytes, {self.end - self.pos} left")

    # the fixed-width readers are inlined (no helper calls): they run once per field of every record
    def int8(self, field: str) -> int:
        pos = self.pos
        if pos + 1 > self.end:
            self._short(1, field)
        self.pos = pos + 1
        return _I8.unpack_from(self.buf, pos)[0]

    def int16(self, field: str) -> int:
        pos = self.pos
        if pos + 2 > self.end:
            self._short(2, field)
        self.pos = pos + 2
        return _I16.unpack_from(self.buf, pos)[0]

    def int32(self, field: str) -> int:
        pos = self.pos
        if pos + 4 > self.end:
            self._short(4, field)
        self.pos = pos + 4
        return _I32.unpack_from(self.buf, pos)[0]

    def int64(self, field: str) -> int:
        pos = self.pos
        if pos + 8 > self.end:
            self._short(8, field)
        self.pos = pos + 8
        return _I64.unpack_from(self.buf, pos)[0]

    def uvarint(self, field: str) -> int:
        """Unsigned varint of at most 5 bytes (Kafka's ``ByteUtils.readUnsignedVarint``)."""
        start = self.pos
        value = shift = 0
        buf, end = self.buf, self.end
        for _ in range(5):
            if self.pos >= end:
                self.fail(field, "varint runs past the end", start)
            b = buf[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
        self.fail(field, "varint longer than 5 bytes", start)

    def _length(self, field: str, compact: bool, nullable: bool, width: int) -> int | None:
        """Length prefix: int16/int32 (-1 = null) or compact uvarint (0 = null); checked against what is left."""
        at = self.pos
        if compact:
            n = self.uvarint(field) - 1
        elif width == 2:
            n = self.int16(field)
        else:
            n = self.int32(field)
        if n < 0:
            if n == -1 and nullable:
                return None
            self.fail(field, "null where the schema allows none" if n == -1 else f"negative length {n}", at)
        if n > self.end - self.pos:
            self.fail(field, f"length {n} exceeds the {self.end - self.pos} bytes left", at)
        return n

    def string(self, field: str, compact: bool = False) -> str:
        pos = self.pos
        if not compact and pos + 2 <= self.end:  # fast path: int16 length, ASCII/UTF-8 that fits
            n = _I16.unpack_from(self.buf, pos)[0]
            start = pos + 2
            if 0 <= n <= self.end - start:
                try:
                    value = self.buf[start:start + n].decode("utf-8")
                except UnicodeDecodeError:
                    pass  # the slow path names the field
                else:
                    self.pos = start + n
                    return value
        n = self._length(field, compact, False, 2)
        return self._utf8(field, n)  # type: ignore[arg-type]

    def nullable_string(self, field: str, compact: bool = False) -> str | None:
        n = self._length(field, compact, True, 2)
        return None if n is None else self._utf8(field, n)

    def _utf8(self, field: str, n: int) -> str:
        at = self.pos
        self.pos += n
        try:
            return self.buf[at:self.pos].decode("utf-8")
        except UnicodeDecodeError as exc:
            self.fail(field, f"invalid UTF-8 ({exc.reason})", at)

    def bytes_(self, field: str, compact: bool = False, nullable: bool = False) -> bytes | None:
        n = self._length(field, compact, nullable, 4)
        if n is None:
            return None
        at = self.pos
        self.pos += n
        return bytes(self.buf[at:self.pos])

    def array(self, field: str, compact: bool = False, min_size: int = 1) -> int:
        """Element count of a non-nullable array; each element needs at least `min_size` bytes."""
        at = self.pos
        n = self.uvarint(field) - 1 if compact else self.int32(field)
        if n < 0:
            self.fail(field, "null array where the schema allows none" if n == -1 else f"negative count {n}", at)
        if n * min_size > self.end - self.pos:
            self.fail(field, f"{n} elements cannot fit in the {self.end - self.pos} bytes left", at)
        return n

    def int32_array(self, field: str, compact: bool = False) -> tuple[int, ...]:
        n = self.array(field, compact, 4)
        at = self.pos
        self.pos += 4 * n
        return unpack_from(f">{n}i", self.buf, at)

    def uuid(self, field: str) -> str:
        """A topic id as Kafka prints it (``Uuid.toString``: URL-safe base64 without padding)."""
        if self.pos + 16 > self.end:
            self._short(16, field)
        raw = self.buf[self.pos:self.pos + 16]
        self.pos += 16
        text = _UUIDS.get(raw)
        if text is None:
            if len(_UUIDS) >= 65536:  # a bounded cache: a cluster has few topic ids, garbage has many
                _UUIDS.clear()
            text = _UUIDS[raw] = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
        return text

    def tagged_fields(self, field: str, known: frozenset[int] = frozenset()) -> dict[int, _Reader]:
        """Skips a tagged-field section; returns a reader over each tag in `known` that is present."""
        found: dict[int, _Reader] = {}
        last = -1
        for _ in range(self.uvarint(f"{field}.numTaggedFields")):
            at = self.pos
            tag = self.uvarint(f"{field}.tag")
            if tag <= last:
                self.fail(f"{field}.tag", f"tag {tag} out of order after {last}", at)
            last = tag
            size = self.uvarint(f"{field}.tag{tag}.size")
            if self.pos + size > self.end:
                self._short(size, f"{field}.tag{tag}")
            if tag in known:
                found[tag] = _Reader(self.buf, f"{self.where}.{field}.tag{tag}", self.pos, self.pos + size)
            self.pos += size
        return found

    def done(self) -> None:
        if self.pos != self.end:
            raise CoordinatorRecordError(self.where, self.pos, f"{self.end - self.pos} unexpected trailing bytes")


def _version(r: _Reader, record: str, low: int, high: int) -> int:
    version = r.int16("version")
    if not low <= version <= high:
        r.fail("version", f"unknown {record} version {version} (known: {low}-{high})", r.pos - 2)
    return version


# ---------------------------------------------------------------------------------------------- keys


@dataclass(frozen=True, slots=True)
class OffsetCommitKey:
    """Record types 0 and 1: the committed offset of one partition (versions 0 and 1 share the layout)."""

    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    """Record type 2: the state of a classic group."""

    group: str


@dataclass(frozen=True, slots=True)
class ConsumerGroupKey:
    """Record types 3-8 (KIP-848 consumer groups); `member` is None for the group-level types 3, 4 and 6."""

    record_type: int
    group: str
    member: str | None


@dataclass(frozen=True, slots=True)
class OtherKey:
    """A record type this decoder does not read (share/streams groups, regex records, ...)."""

    record_type: int


Key = OffsetCommitKey | GroupMetadataKey | ConsumerGroupKey | OtherKey

CONSUMER_GROUP_METADATA = 3
CONSUMER_GROUP_PARTITION_METADATA = 4
CONSUMER_GROUP_MEMBER_METADATA = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
_MEMBER_KEYS = frozenset({5, 7, 8})


def decode_key(data: bytes) -> Key:
    """The key of an offsets-topic record (all key structs are non-flexible)."""
    r = _Reader(data, "key")
    record_type = r.int16("version")
    if record_type < 0:
        r.fail("version", f"negative record type {record_type}", 0)
    if record_type in (0, 1):
        key: Key = OffsetCommitKey(r.string("group"), r.string("topic"), r.int32("partition"))
    elif record_type == 2:
        key = GroupMetadataKey(r.string("group"))
    elif record_type <= 8:
        group = r.string("groupId")
        key = ConsumerGroupKey(record_type, group, r.string("memberId") if record_type in _MEMBER_KEYS else None)
    else:
        return OtherKey(record_type)
    r.done()
    return key


# ------------------------------------------------------------------------------------- classic groups


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    version: int
    offset: int
    leader_epoch: int  # -1 before version 3
    metadata: str
    commit_timestamp: int
    expire_timestamp: int  # -1 unless version 1


def decode_offset_commit_value(data: bytes) -> OffsetCommitValue:
    r = _Reader(data, "OffsetCommitValue")
    v = _version(r, "OffsetCommitValue", 0, 4)
    flexible = v >= 4
    offset = r.int64("offset")
    leader_epoch = r.int32("leaderEpoch") if v >= 3 else -1
    metadata = r.string("metadata", flexible)
    commit_ts = r.int64("commitTimestamp")
    expire_ts = r.int64("expireTimestamp") if v == 1 else -1
    if flexible:
        r.tagged_fields("_tagged")
    r.done()
    return OffsetCommitValue(v, offset, leader_epoch, metadata, commit_ts, expire_ts)


@dataclass(frozen=True, slots=True)
class MemberMetadata:
    """One member of a classic group; `subscription` / `assignment` are the protocol's opaque bytes."""

    member_id: str
    group_instance_id: str | None  # version 3+
    client_id: str
    client_host: str
    rebalance_timeout: int  # version 1+, else -1
    session_timeout: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    """A classic group as stored after a completed rebalance (or when it became Empty)."""

    version: int
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int  # version 2+, else -1
    members: tuple[MemberMetadata, ...]


def decode_group_metadata_value(data: bytes) -> GroupMetadataValue:
    r = _Reader(data, "GroupMetadataValue")
    v = _version(r, "GroupMetadataValue", 0, 4)
    c = v >= 4
    protocol_type = r.string("protocolType", c)
    generation = r.int32("generation")
    protocol = r.nullable_string("protocol", c)
    leader = r.nullable_string("leader", c)
    state_ts = r.int64("currentStateTimestamp") if v >= 2 else -1
    members = []
    for i in range(r.array("members", c, 9)):
        r.where = f"GroupMetadataValue.members[{i}]"
        member_id = r.string("memberId", c)
        instance_id = r.nullable_string("groupInstanceId", c) if v >= 3 else None
        client_id = r.string("clientId", c)
        client_host = r.string("clientHost", c)
        rebalance_timeout = r.int32("rebalanceTimeout") if v >= 1 else -1
        session_timeout = r.int32("sessionTimeout")
        subscription = r.bytes_("subscription", c)
        assignment = r.bytes_("assignment", c)
        if c:
            r.tagged_fields("_tagged")
        members.append(MemberMetadata(member_id, instance_id, client_id, client_host, rebalance_timeout,
                                      session_timeout, subscription, assignment))  # type: ignore[arg-type]
    r.where = "GroupMetadataValue"
    if c:
        r.tagged_fields("_tagged")
    r.done()
    return GroupMetadataValue(v, protocol_type, generation, protocol, leader, state_ts, tuple(members))


# ----------------------------------------------------------------------------- the consumer protocol


@dataclass(frozen=True, slots=True)
class Subscription:
    """ConsumerProtocolSubscription: what a member sent in JoinGroup."""

    version: int  # as written; decoded with min(version, 3)
    topics: tuple[str, ...]
    user_data: bytes | None
    owned_partitions: TopicPartitions  # version 1+
    generation_id: int  # version 2+, else -1
    rack_id: str | None  # version 3+


@dataclass(frozen=True, slots=True)
class Assignment:
    """ConsumerProtocolAssignment: what the leader gave a member in SyncGroup."""

    version: int
    partitions: TopicPartitions
    user_data: bytes | None


def _topic_partitions(r: _Reader, field: str) -> TopicPartitions:
    out = []
    where = r.where
    for i in range(r.array(field, False, 6)):
        r.where = f"{where}.{field}[{i}]"
        topic = r.string("topic")
        out.append((topic, r.int32_array("partitions")))
    r.where = where
    return tuple(out)


def decode_subscription(data: bytes) -> Subscription:
    r = _Reader(data, "Subscription")
    version = r.int16("version")
    if version < 0:
        r.fail("version", f"unknown Subscription version {version}", 0)
    v = min(version, 3)
    topics = tuple(r.string(f"topics[{i}]") for i in range(r.array("topics", False, 2)))
    user_data = r.bytes_("userData", nullable=True)
    owned = _topic_partitions(r, "ownedPartitions") if v >= 1 else ()
    generation_id = r.int32("generationId") if v >= 2 else -1
    rack_id = r.nullable_string("rackId") if v >= 3 else None
    return Subscription(version, topics, user_data, owned, generation_id, rack_id)


def decode_assignment(data: bytes) -> Assignment:
    r = _Reader(data, "Assignment")
    version = r.int16("version")
    if version < 0:
        r.fail("version", f"unknown Assignment version {version}", 0)
    partitions = _topic_partitions(r, "assignedPartitions")
    return Assignment(version, partitions, r.bytes_("userData", nullable=True))


@dataclass(frozen=True, slots=True)
class StickyUserData:
    """The userData of the eager StickyAssignor: the member's previous assignment and, from the V1 layout on,
    its generation (None for V0)."""

    partitions: TopicPartitions
    generation: int | None


def decode_sticky_user_data(data: bytes) -> StickyUserData:
    """Java's layout (``StickyAssignor.serializeTopicPartitionAssignment``: the struct without a version
    prefix, V1 = V0 + generation) or kafka-python 3's (its ``StickyAssignorUserData`` is written with an
    int16 version prefix). Java's layout is tried first and must use every byte; a V1/V0 fallback on a short
    generation is what Java's reader does."""
    r = _Reader(data, "StickyUserData")
    try:
        partitions = _topic_partitions(r, "previousAssignment")
        generation = r.int32("generation") if r.pos < r.end else None
        r.done()
        return StickyUserData(partitions, generation)
    except CoordinatorRecordError as java_layout_error:
        r = _Reader(data, "StickyUserData")
        version = r.int16("version")
        if version not in (0, 1):
            raise java_layout_error from None
        try:
            partitions = _topic_partitions(r, "previousAssignment")
            generation = r.int32("generation") if version == 1 else None
            r.done()
        except CoordinatorRecordError:
            raise java_layout_error from None
        return StickyUserData(partitions, generation)


def decode_cooperative_user_data(data: bytes) -> int:
    """The generation that the CooperativeStickyAssignor writes into userData for Subscriptions before v2."""
    return _Reader(data, "CooperativeUserData").int32("generation")


# ---------------------------------------------------------------------- KIP-848 consumer groups (3-8)


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadataValue:
    epoch: int


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    topic_id: str
    name: str
    num_partitions: int
    partition_racks: tuple[tuple[int, tuple[str, ...]], ...]  # (partition, racks); empty when unknown


@dataclass(frozen=True, slots=True)
class ConsumerGroupPartitionMetadataValue:
    topics: tuple[TopicMetadata, ...]


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """Tagged field 0 of the member metadata: a classic-protocol member inside a consumer group."""

    session_timeout: int
    supported_protocols: tuple[tuple[str, bytes], ...]  # (protocol name, Subscription bytes)


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadataValue:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout: int
    server_assignor: str | None
    classic_member_metadata: ClassicMemberMetadata | None


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadataValue:
    assignment_epoch: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMemberValue:
    partitions: TopicIdPartitions


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignmentValue:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: TopicIdPartitions
    partitions_pending_revocation: TopicIdPartitions


def _flexible_v0(data: bytes, record: str) -> _Reader:
    r = _Reader(data, record)
    _version(r, record, 0, 0)
    return r


def _end(r: _Reader) -> None:
    r.tagged_fields("_tagged")
    r.done()


def _topic_id_partitions(r: _Reader, field: str) -> TopicIdPartitions:
    out = []
    where = r.where
    for i in range(r.array(field, True, 18)):
        r.where = f"{where}.{field}[{i}]"
        topic_id = r.uuid("topicId")
        partitions = r.int32_array("partitions", True)
        r.tagged_fields("_tagged")  # AssignmentEpochs (KIP-1251) is tag 0 here; not needed
        out.append((topic_id, partitions))
    r.where = where
    return tuple(out)


def decode_consumer_group_metadata_value(data: bytes) -> ConsumerGroupMetadataValue:
    r = _flexible_v0(data, "ConsumerGroupMetadataValue")
    epoch = r.int32("epoch")
    _end(r)
    return ConsumerGroupMetadataValue(epoch)


def decode_partition_metadata_value(data: bytes) -> ConsumerGroupPartitionMetadataValue:
    r = _flexible_v0(data, "ConsumerGroupPartitionMetadataValue")
    topics = []
    for i in range(r.array("topics", True, 23)):
        r.where = f"ConsumerGroupPartitionMetadataValue.topics[{i}]"
        topic_id = r.uuid("topicId")
        name = r.string("topicName", True)
        count = r.int32("numPartitions")
        racks = []
        where = r.where
        for j in range(r.array("partitionMetadata", True, 6)):
            r.where = f"{where}.partitionMetadata[{j}]"
            partition = r.int32("partition")
            names = tuple(r.string(f"racks[{k}]", True) for k in range(r.array("racks", True, 1)))
            r.tagged_fields("_tagged")
            racks.append((partition, names))
        r.where = where
        r.tagged_fields("_tagged")
        topics.append(TopicMetadata(topic_id, name, count, tuple(racks)))
    r.where = "ConsumerGroupPartitionMetadataValue"
    _end(r)
    return ConsumerGroupPartitionMetadataValue(tuple(topics))


def decode_member_metadata_value(data: bytes) -> ConsumerGroupMemberMetadataValue:
    r = _flexible_v0(data, "ConsumerGroupMemberMetadataValue")
    instance_id = r.nullable_string("instanceId", True)
    rack_id = r.nullable_string("rackId", True)
    client_id = r.string("clientId", True)
    client_host = r.string("clientHost", True)
    names = tuple(r.string(f"subscribedTopicNames[{i}]", True)
                  for i in range(r.array("subscribedTopicNames", True, 1)))
    regex = r.nullable_string("subscribedTopicRegex", True)
    rebalance_timeout = r.int32("rebalanceTimeoutMs")
    server_assignor = r.nullable_string("serverAssignor", True)
    tags = r.tagged_fields("_tagged", frozenset({0}))
    r.done()
    classic = _classic_member_metadata(tags[0]) if 0 in tags else None
    return ConsumerGroupMemberMetadataValue(instance_id, rack_id, client_id, client_host, names, regex,
                                            rebalance_timeout, server_assignor, classic)


def _classic_member_metadata(r: _Reader) -> ClassicMemberMetadata | None:
    """A nullable struct: Kafka's generated code writes a presence byte before it (negative = null)."""
    if r.int8("present") < 0:
        r.done()
        return None
    session_timeout = r.int32("sessionTimeoutMs")
    protocols = []
    where = r.where
    for i in range(r.array("supportedProtocols", True, 3)):
        r.where = f"{where}.supportedProtocols[{i}]"
        name = r.string("name", True)
        metadata = r.bytes_("metadata", True)
        r.tagged_fields("_tagged")
        protocols.append((name, metadata))
    r.where = where
    _end(r)
    return ClassicMemberMetadata(session_timeout, tuple(protocols))  # type: ignore[arg-type]


def decode_target_assignment_metadata_value(data: bytes) -> ConsumerGroupTargetAssignmentMetadataValue:
    r = _flexible_v0(data, "ConsumerGroupTargetAssignmentMetadataValue")
    epoch = r.int32("assignmentEpoch")
    _end(r)
    return ConsumerGroupTargetAssignmentMetadataValue(epoch)


def decode_target_assignment_member_value(data: bytes) -> ConsumerGroupTargetAssignmentMemberValue:
    r = _flexible_v0(data, "ConsumerGroupTargetAssignmentMemberValue")
    partitions = _topic_id_partitions(r, "topicPartitions")
    _end(r)
    return ConsumerGroupTargetAssignmentMemberValue(partitions)


def decode_current_member_assignment_value(data: bytes) -> ConsumerGroupCurrentMemberAssignmentValue:
    r = _flexible_v0(data, "ConsumerGroupCurrentMemberAssignmentValue")
    member_epoch = r.int32("memberEpoch")
    previous = r.int32("previousMemberEpoch")
    state = r.int8("state")
    assigned = _topic_id_partitions(r, "assignedPartitions")
    pending = _topic_id_partitions(r, "partitionsPendingRevocation")
    _end(r)
    return ConsumerGroupCurrentMemberAssignmentValue(member_epoch, previous, state, assigned, pending)


Value = (OffsetCommitValue | GroupMetadataValue | ConsumerGroupMetadataValue | ConsumerGroupPartitionMetadataValue
         | ConsumerGroupMemberMetadataValue | ConsumerGroupTargetAssignmentMetadataValue
         | ConsumerGroupTargetAssignmentMemberValue | ConsumerGroupCurrentMemberAssignmentValue)

_VALUE_DECODERS = {
    0: decode_offset_commit_value,
    1: decode_offset_commit_value,
    2: decode_group_metadata_value,
    3: decode_consumer_group_metadata_value,
    4: decode_partition_metadata_value,
    5: decode_member_metadata_value,
    6: decode_target_assignment_metadata_value,
    7: decode_target_assignment_member_value,
    8: decode_current_member_assignment_value,
}


def decode_value(key: Key, data: bytes | None) -> Value | None:
    """The value belonging to `key`; None for a tombstone or for a record type this decoder does not read."""
    if data is None or isinstance(key, OtherKey):
        return None
    if isinstance(key, ConsumerGroupKey):
        return _VALUE_DECODERS[key.record_type](data)
    return _VALUE_DECODERS[2 if isinstance(key, GroupMetadataKey) else 0](data)

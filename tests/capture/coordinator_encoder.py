"""An encoder of offsets-topic records that is independent of `streaming.capture.coordinator_records`.

It builds kafka-python's generated structs (``kafka.protocol.api_data.ApiData``, the same machinery kafka-python
uses for the wire protocol) from the field lists of Kafka's message schemas (apache/kafka
``group-coordinator/src/main/resources/common/message/*.json``), transcribed below with names, types and
versions only. The consumer protocol's Subscription / Assignment and the sticky userData come from
kafka-python's own classes.
"""

from __future__ import annotations

import base64
import uuid
import weakref
from typing import Any

from kafka.protocol.api_data import ApiData
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from kafka.protocol.schemas import BaseField, StructField


def _f(name: str, type_: str, versions: str = "0+", **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, "versions": versions, **extra}


_TP = [_f("Topic", "string"), _f("Partitions", "[]int32")]
_TID = [_f("TopicId", "uuid"), _f("Partitions", "[]int32")]

SCHEMAS: dict[str, tuple[str, str, list[dict[str, Any]]]] = {  # name -> (validVersions, flexibleVersions, fields)
    "OffsetCommitKey": ("0-1", "none", [_f("group", "string"), _f("topic", "string"), _f("partition", "int32")]),
    "GroupMetadataKey": ("2", "none", [_f("group", "string", "2")]),
    "ConsumerGroupMetadataKey": ("3", "none", [_f("GroupId", "string", "3")]),
    "ConsumerGroupPartitionMetadataKey": ("4", "none", [_f("GroupId", "string", "4")]),
    "ConsumerGroupMemberMetadataKey": ("5", "none", [_f("GroupId", "string", "5"), _f("MemberId", "string", "5")]),
    "ConsumerGroupTargetAssignmentMetadataKey": ("6", "none", [_f("GroupId", "string", "6")]),
    "ConsumerGroupTargetAssignmentMemberKey": ("7", "none", [_f("GroupId", "string", "7"),
                                                            _f("MemberId", "string", "7")]),
    "ConsumerGroupCurrentMemberAssignmentKey": ("8", "none", [_f("GroupId", "string", "8"),
                                                             _f("MemberId", "string", "8")]),
    "OffsetCommitValue": ("0-4", "4+", [
        _f("offset", "int64"), _f("leaderEpoch", "int32", "3+"), _f("metadata", "string"),
        _f("commitTimestamp", "int64"), _f("expireTimestamp", "int64", "1")]),
    "GroupMetadataValue": ("0-4", "4+", [
        _f("protocolType", "string"), _f("generation", "int32"),
        _f("protocol", "string", nullableVersions="0+"), _f("leader", "string", nullableVersions="0+"),
        _f("currentStateTimestamp", "int64", "2+"),
        _f("members", "[]MemberMetadata", fields=[
            _f("memberId", "string"), _f("groupInstanceId", "string", "3+", nullableVersions="3+"),
            _f("clientId", "string"), _f("clientHost", "string"), _f("rebalanceTimeout", "int32", "1+"),
            _f("sessionTimeout", "int32"), _f("subscription", "bytes"), _f("assignment", "bytes")])]),
    "ConsumerGroupMetadataValue": ("0", "0+", [_f("Epoch", "int32")]),
    "ConsumerGroupPartitionMetadataValue": ("0", "0+", [
        _f("Topics", "[]TopicMetadata", fields=[
            _f("TopicId", "uuid"), _f("TopicName", "string"), _f("NumPartitions", "int32"),
            _f("PartitionMetadata", "[]PartitionMetadata", fields=[
                _f("Partition", "int32"), _f("Racks", "[]string")])])]),
    "ConsumerGroupMemberMetadataValue": ("0", "0+", [
        _f("InstanceId", "string", nullableVersions="0+"), _f("RackId", "string", nullableVersions="0+"),
        _f("ClientId", "string"), _f("ClientHost", "string"), _f("SubscribedTopicNames", "[]string"),
        _f("SubscribedTopicRegex", "string", nullableVersions="0+"), _f("RebalanceTimeoutMs", "int32"),
        _f("ServerAssignor", "string", nullableVersions="0+"),
        _f("ClassicMemberMetadata", "ClassicMemberMetadata", nullableVersions="0+", taggedVersions="0+", tag=0,
           default=None, fields=[
               _f("SessionTimeoutMs", "int32"),
               _f("SupportedProtocols", "[]ClassicProtocol", fields=[_f("Name", "string"),
                                                                     _f("Metadata", "bytes")])])]),
    "ConsumerGroupTargetAssignmentMetadataValue": ("0", "0+", [_f("AssignmentEpoch", "int32")]),
    "ConsumerGroupTargetAssignmentMemberValue": ("0", "0+", [_f("TopicPartitions", "[]TopicPartition",
                                                                fields=_TID)]),
    "ConsumerGroupCurrentMemberAssignmentValue": ("0", "0+", [
        _f("MemberEpoch", "int32"), _f("PreviousMemberEpoch", "int32"), _f("State", "int8"),
        _f("AssignedPartitions", "[]TopicPartitions", fields=_TID),
        _f("PartitionsPendingRevocation", "[]TopicPartitions", fields=_TID)]),
}

_CLASSES: dict[str, type] = {}


def data_class(name: str, valid: str, flexible: str, fields: list[dict[str, Any]]) -> type:
    """A kafka-python ApiData class for a schema given as Kafka's JSON spec gives it."""
    schema = {"type": "data", "name": name, "validVersions": valid, "flexibleVersions": flexible, "fields": fields}
    cls = type(ApiData)(name, (ApiData,), {"_json": schema, "_struct": StructField(schema)}, init=False)
    cls._struct.set_data_class(weakref.proxy(cls))
    cls._flexible_versions = BaseField.parse_versions(flexible)
    cls._valid_versions = BaseField.parse_versions(valid)
    return cls


def struct_class(name: str) -> type:
    """A kafka-python ApiData class for one of `SCHEMAS` (built once)."""
    if name not in _CLASSES:
        _CLASSES[name] = data_class(name, *SCHEMAS[name])
    return _CLASSES[name]


KEY_NAMES = {0: "OffsetCommitKey", 1: "OffsetCommitKey", 2: "GroupMetadataKey", 3: "ConsumerGroupMetadataKey",
             4: "ConsumerGroupPartitionMetadataKey", 5: "ConsumerGroupMemberMetadataKey",
             6: "ConsumerGroupTargetAssignmentMetadataKey", 7: "ConsumerGroupTargetAssignmentMemberKey",
             8: "ConsumerGroupCurrentMemberAssignmentKey"}
VALUE_NAMES = {0: "OffsetCommitValue", 1: "OffsetCommitValue", 2: "GroupMetadataValue",
               3: "ConsumerGroupMetadataValue", 4: "ConsumerGroupPartitionMetadataValue",
               5: "ConsumerGroupMemberMetadataValue", 6: "ConsumerGroupTargetAssignmentMetadataValue",
               7: "ConsumerGroupTargetAssignmentMemberValue", 8: "ConsumerGroupCurrentMemberAssignmentValue"}


def key(record_type: int, *fields: Any) -> bytes:
    """The int16 record type, then the key struct (positional fields in schema order)."""
    return struct_class(KEY_NAMES[record_type])(*fields, version=record_type).encode()


def value(record_type: int, version: int, **fields: Any) -> bytes:
    """The int16 value version, then the value struct (snake_case field names, as kafka-python names them)."""
    return struct_class(VALUE_NAMES[record_type])(version=version, **fields).encode()


def member(**fields: Any) -> Any:
    """A GroupMetadataValue member (snake_case fields)."""
    return struct_class("GroupMetadataValue").MemberMetadata(**fields)


def topic_uuid(topic_id: str) -> uuid.UUID:
    """The UUID of a topic id printed as Kafka prints it (URL-safe base64, no padding)."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(topic_id + "=="))


def subscription(version: int, topics: list[str], user_data: bytes | None = None,
                 owned: list[tuple[str, list[int]]] = (), generation: int = -1, rack: str | None = None) -> bytes:
    return ConsumerProtocolSubscription(version=version, topics=topics, user_data=user_data,
                                        owned_partitions=list(owned), generation_id=generation,
                                        rack_id=rack).encode()


def assignment(version: int, partitions: list[tuple[str, list[int]]], user_data: bytes | None = None) -> bytes:
    return ConsumerProtocolAssignment(version=version, assigned_partitions=partitions, user_data=user_data).encode()

"""The group-listing messages of `rebalance capture --source describe`: ListGroups (API key 16, v0-5) and
KIP-848's ConsumerGroupDescribe (API key 69, v0-2), declared field by field after apache/kafka's
`clients/src/main/resources/common/message/{ListGroups,ConsumerGroupDescribe}{Request,Response}.json`, and
their answers as typed records. Pure: bytes in, records out (`streaming.capture.group_client` sends them).

Which version to speak is ApiVersions' business: `negotiate` takes the highest version both sides know.
ListGroups v5 carries `TypesFilter` (KIP-848), so a v5 answer says which groups are `classic` and which
`consumer`; an older broker has no consumer-protocol groups to tell apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from streaming.capture.wire import Field, Message, decode, encode, kafka_topic_id

LIST_GROUPS_REQUEST = Message("ListGroupsRequest", 16, "0-5", "3+", (
    Field("StatesFilter", "[]string", "4+"),
    Field("TypesFilter", "[]string", "5+"),
))
LIST_GROUPS_RESPONSE = Message("ListGroupsResponse", 16, "0-5", "3+", (
    Field("ThrottleTimeMs", "int32", "1+"),
    Field("ErrorCode", "int16", "0+"),
    Field("Groups", "[]ListedGroup", "0+", fields=(
        Field("GroupId", "string", "0+"),
        Field("ProtocolType", "string", "0+"),
        Field("GroupState", "string", "4+"),
        Field("GroupType", "string", "5+"),
    )),
))

_TOPIC_PARTITIONS = (
    Field("TopicId", "uuid", "0+"),
    Field("TopicName", "string", "0+"),
    Field("Partitions", "[]int32", "0+"),
)
_ASSIGNMENT = (Field("TopicPartitions", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS),)

CONSUMER_GROUP_DESCRIBE_REQUEST = Message("ConsumerGroupDescribeRequest", 69, "0-2", "0+", (
    Field("GroupIds", "[]string", "0+"),
    Field("IncludeAuthorizedOperations", "bool", "0+"),
))
CONSUMER_GROUP_DESCRIBE_RESPONSE = Message("ConsumerGroupDescribeResponse", 69, "0-2", "0+", (
    Field("ThrottleTimeMs", "int32", "0+"),
    Field("Groups", "[]DescribedGroup", "0+", fields=(
        Field("ErrorCode", "int16", "0+"),
        Field("ErrorMessage", "string", "0+", nullable_versions="0+", default="null"),
        Field("GroupId", "string", "0+"),
        Field("GroupState", "string", "0+"),
        Field("GroupEpoch", "int32", "0+"),
        Field("AssignmentEpoch", "int32", "0+"),
        Field("AssignorName", "string", "0+"),
        Field("Members", "[]Member", "0+", fields=(
            Field("MemberId", "string", "0+"),
            Field("InstanceId", "string", "0+", nullable_versions="0+", default="null"),
            Field("RackId", "string", "0+", nullable_versions="0+", default="null"),
            Field("MemberEpoch", "int32", "0+"),
            Field("ClientId", "string", "0+"),
            Field("ClientHost", "string", "0+"),
            Field("SubscribedTopicNames", "[]string", "0+"),
            Field("SubscribedTopicRegex", "string", "0+", nullable_versions="0+", default="null"),
            Field("Assignment", "Assignment", "0+", fields=_ASSIGNMENT),
            Field("TargetAssignment", "Assignment", "0+", fields=_ASSIGNMENT),
            Field("MemberType", "int8", "1+", default="-1"),  # KIP-1099: 0 classic member, 1 consumer member
        )),
        Field("GroupCreationTimeMs", "int64", "2+", default="-1"),
        Field("AuthorizedOperations", "int32", "0+", default="-2147483648"),
    )),
))

GROUP_TYPES = ["classic", "consumer"]  # the TypesFilter of a v5 listing: the groups capture can describe


def negotiate(message: Message, broker: tuple[int, int] | None) -> int | None:
    """The highest version of `message` that the broker's ApiVersions range (min, max) also has; None when
    the broker lacks the API or the ranges do not meet."""
    if broker is None:
        return None
    version = min(message.max_version, broker[1])
    return version if version >= broker[0] and message.valid(version) else None


@dataclass(frozen=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str | None  # v4+
    group_type: str | None  # v5+: "classic", "consumer" (lower case, as Kafka's GroupType prints it)


@dataclass(frozen=True)
class TopicAssignment:
    topic_id: str  # as Kafka prints it (URL-safe base64)
    topic_name: str  # "" when the coordinator could not name it
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class DescribedMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: tuple[TopicAssignment, ...]  # what the member holds now
    target_assignment: tuple[TopicAssignment, ...]  # what the assignor gave it at the assignment epoch
    member_type: int  # -1 unknown (v0), 0 classic protocol member, 1 consumer protocol member


@dataclass(frozen=True)
class DescribedConsumerGroup:
    error_code: int
    error_message: str | None
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: tuple[DescribedMember, ...]


def list_groups_request(version: int) -> bytes:
    """All groups a broker coordinates; from v5 only the types capture describes (each answer names its type)."""
    return encode(LIST_GROUPS_REQUEST, version, {"StatesFilter": [], "TypesFilter": GROUP_TYPES})


def parse_list_groups(version: int, body: bytes) -> tuple[int, list[ListedGroup]]:
    """(error code, groups) of a ListGroups answer; `WireError` for bytes that do not follow the schema."""
    data = decode(LIST_GROUPS_RESPONSE, version, body)
    groups = [ListedGroup(g["GroupId"], g["ProtocolType"], g["GroupState"] if version >= 4 else None,
                          g["GroupType"] if version >= 5 else None) for g in data["Groups"]]
    return data["ErrorCode"], groups


def consumer_group_describe_request(version: int, groups: Sequence[str]) -> bytes:
    return encode(CONSUMER_GROUP_DESCRIBE_REQUEST, version,
                  {"GroupIds": list(groups), "IncludeAuthorizedOperations": False})


def _assignment(value: dict[str, Any]) -> tuple[TopicAssignment, ...]:
    return tuple(TopicAssignment(kafka_topic_id(t["TopicId"]), t["TopicName"], tuple(t["Partitions"]))
                 for t in value["TopicPartitions"])


def parse_consumer_group_describe(version: int, body: bytes) -> list[DescribedConsumerGroup]:
    """The groups of a ConsumerGroupDescribe answer; `WireError` for bytes that do not follow the schema."""
    data = decode(CONSUMER_GROUP_DESCRIBE_RESPONSE, version, body)
    return [DescribedConsumerGroup(
        g["ErrorCode"], g["ErrorMessage"], g["GroupId"], g["GroupState"], g["GroupEpoch"], g["AssignmentEpoch"],
        g["AssignorName"],
        tuple(DescribedMember(m["MemberId"], m["InstanceId"], m["RackId"], m["MemberEpoch"], m["ClientId"],
                              m["ClientHost"], tuple(m["SubscribedTopicNames"]), m["SubscribedTopicRegex"],
                              _assignment(m["Assignment"]), _assignment(m["TargetAssignment"]), m["MemberType"])
              for m in g["Members"]))
        for g in data["Groups"]]

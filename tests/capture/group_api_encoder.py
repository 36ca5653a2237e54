"""ListGroups and ConsumerGroupDescribe bytes built independently of `streaming.capture.wire` / `group_messages`.

ListGroups: kafka-python's own `ListGroupsRequest` / `ListGroupsResponse`, generated from the
`ListGroups{Request,Response}.json` specs of apache/kafka that kafka-python ships. ConsumerGroupDescribe
(kafka-python has no class for it): the fields of apache/kafka's
`clients/src/main/resources/common/message/ConsumerGroupDescribe{Request,Response}.json` (validVersions
0-2: v1 adds the member's MemberType, v2 the group's GroupCreationTimeMs), transcribed below with names,
types, versions and defaults only and run through kafka-python's schema machinery
(`coordinator_encoder.data_class`). `FUTURE_TAG` is a tagged field a later broker might add: the decoder
under test must skip it.
"""

from __future__ import annotations

import uuid
from typing import Any

import coordinator_encoder as enc
from kafka.protocol.admin import ListGroupsRequest, ListGroupsResponse

_f = enc._f
FUTURE_TAG = _f("FutureField", "string", "0+", nullableVersions="0+", taggedVersions="0+", tag=9, default=None)

_TOPIC_PARTITIONS = [_f("TopicId", "uuid"), _f("TopicName", "string"), _f("Partitions", "[]int32"), FUTURE_TAG]
_ASSIGNMENT = [_f("TopicPartitions", "[]TopicPartitions", fields=_TOPIC_PARTITIONS)]


def _response_fields(members_nullable: bool) -> list[dict[str, Any]]:
    members = {"nullableVersions": "0+"} if members_nullable else {}
    return [
        _f("ThrottleTimeMs", "int32"),
        _f("Groups", "[]DescribedGroup", fields=[
            _f("ErrorCode", "int16"),
            _f("ErrorMessage", "string", nullableVersions="0+", default="null"),
            _f("GroupId", "string"),
            _f("GroupState", "string"),
            _f("GroupEpoch", "int32"),
            _f("AssignmentEpoch", "int32"),
            _f("AssignorName", "string"),
            _f("Members", "[]Member", **members, fields=[
                _f("MemberId", "string"),
                _f("InstanceId", "string", nullableVersions="0+", default="null"),
                _f("RackId", "string", nullableVersions="0+", default="null"),
                _f("MemberEpoch", "int32"),
                _f("ClientId", "string"),
                _f("ClientHost", "string"),
                _f("SubscribedTopicNames", "[]string"),
                _f("SubscribedTopicRegex", "string", nullableVersions="0+", default="null"),
                _f("Assignment", "Assignment", fields=_ASSIGNMENT),
                _f("TargetAssignment", "Assignment", fields=_ASSIGNMENT),
                _f("MemberType", "int8", "1+", default="-1"),
                FUTURE_TAG]),
            _f("GroupCreationTimeMs", "int64", "2+", default="-1"),
            _f("AuthorizedOperations", "int32", default="-2147483648"),
            FUTURE_TAG]),
        FUTURE_TAG]


REQUEST = enc.data_class("ConsumerGroupDescribeRequest", "0-2", "0+", [
    _f("GroupIds", "[]string"), _f("IncludeAuthorizedOperations", "bool")])
RESPONSE = enc.data_class("ConsumerGroupDescribeResponse", "0-2", "0+", _response_fields(False))
# the same with a Members array that may be null: bytes the real schema forbids
RESPONSE_NULL_MEMBERS = enc.data_class("ConsumerGroupDescribeResponseNullMembers", "0-2", "0+", _response_fields(True))

_GROUP = RESPONSE.DescribedGroup
_MEMBER = _GROUP.Member
_TOPIC = _MEMBER.Assignment.TopicPartitions


def describe_request(version: int, groups: list[str], include_authorized_operations: bool = False) -> bytes:
    return REQUEST(version=version, group_ids=groups,
                   include_authorized_operations=include_authorized_operations).encode(header=False)


def topic_id(name: str) -> uuid.UUID:
    """A fixed topic id per name (the tests' cluster)."""
    return uuid.uuid5(uuid.NAMESPACE_DNS, name)


def assignment(parts: dict[str, list[int]], names: bool = True) -> Any:
    """An Assignment struct; `names=False` leaves TopicName empty (the coordinator could not name the id)."""
    return _MEMBER.Assignment(topic_partitions=[
        _TOPIC(topic_id=topic_id(t), topic_name=t if names else "", partitions=p) for t, p in parts.items()])


def member(member_id: str, topics: list[str], target: dict[str, list[int]], current: dict[str, list[int]] | None = None,
           *, epoch: int = 1, regex: str | None = None, rack: str | None = None, instance_id: str | None = None,
           member_type: int = 1, names: bool = True, **extra: Any) -> Any:
    return _MEMBER(member_id=member_id, instance_id=instance_id, rack_id=rack, member_epoch=epoch,
                   client_id=f"client-{member_id}", client_host="/10.0.0.1", subscribed_topic_names=topics,
                   subscribed_topic_regex=regex, assignment=assignment(current or {}, names),
                   target_assignment=assignment(target, names), member_type=member_type, **extra)


def group(group_id: str, assignment_epoch: int, members: list[Any], *, assignor: str = "uniform",
          state: str = "Stable", error_code: int = 0, error_message: str | None = None, **extra: Any) -> Any:
    return _GROUP(error_code=error_code, error_message=error_message, group_id=group_id, group_state=state,
                  group_epoch=assignment_epoch, assignment_epoch=assignment_epoch, assignor_name=assignor,
                  members=members, **extra)


def describe_response(version: int, groups: list[Any], cls: type = RESPONSE, **extra: Any) -> bytes:
    return cls(version=version, throttle_time_ms=0, groups=groups, **extra).encode(header=False)


def list_groups_request(version: int, types: list[str]) -> bytes:
    return ListGroupsRequest(version=version, states_filter=[], types_filter=types).encode(header=False)


def list_groups_response(version: int, groups: list[tuple[str, str, str, str]], error_code: int = 0) -> bytes:
    """groups: (id, protocol type, state, type); the fields a version lacks are left out by the encoder."""
    g = ListGroupsResponse.ListedGroup
    return ListGroupsResponse(version=version, throttle_time_ms=0, error_code=error_code, groups=[
        g(version=version, group_id=i, protocol_type=p, group_state=s, group_type=t) for i, p, s, t in groups
    ]).encode(header=False)

"""ListGroups and ConsumerGroupDescribe against bytes built from Kafka's message schemas (group_api_encoder):
the requests we send are byte for byte what the schema says, the answers decode field by field at every
version, tagged fields a later broker adds are skipped, and bytes the schema forbids are refused."""

from __future__ import annotations

import group_api_encoder as enc
import pytest
from kafka.protocol.admin import ListGroupsRequest

from streaming.capture.group_messages import (
    CONSUMER_GROUP_DESCRIBE_REQUEST,
    LIST_GROUPS_REQUEST,
    DescribedConsumerGroup,
    DescribedMember,
    ListedGroup,
    TopicAssignment,
    consumer_group_describe_request,
    list_groups_request,
    negotiate,
    parse_consumer_group_describe,
    parse_list_groups,
)
from streaming.capture.wire import WireError, kafka_topic_id, request_header, response_correlation


@pytest.mark.parametrize("version", range(6))
def test_list_groups_requests_are_the_schema_s_bytes(version) -> None:
    # v5 asks for the classic and consumer groups (TypesFilter); older versions have no such field
    assert list_groups_request(version) == enc.list_groups_request(version, ["classic", "consumer"])


@pytest.mark.parametrize("version", [0, 3, 5])
def test_request_headers_are_the_schema_s_bytes(version) -> None:
    """Header v1 (v2 from ListGroups v3, the first flexible version), as kafka-python frames its own."""
    request = ListGroupsRequest(version=version, states_filter=[], types_filter=["classic", "consumer"])
    request.with_header(correlation_id=7, client_id="capture")
    theirs = request.encode(header=True)
    ours = request_header(16, version, 7, "capture", LIST_GROUPS_REQUEST.flexible(version))
    assert theirs == ours + list_groups_request(version)


@pytest.mark.parametrize("version", range(6))
def test_list_groups_answers_decode_at_every_version(version) -> None:
    body = enc.list_groups_response(version, [("orders", "consumer", "Stable", "classic"),
                                              ("payments", "consumer", "Reconciling", "consumer"),
                                              ("connect-x", "connect", "Stable", "classic")])
    error, groups = parse_list_groups(version, body)
    state = (lambda s: s) if version >= 4 else (lambda s: None)
    kind = (lambda t: t) if version >= 5 else (lambda t: None)
    assert (error, groups) == (0, [ListedGroup("orders", "consumer", state("Stable"), kind("classic")),
                                   ListedGroup("payments", "consumer", state("Reconciling"), kind("consumer")),
                                   ListedGroup("connect-x", "connect", state("Stable"), kind("classic"))])


def test_a_list_groups_answer_derived_field_by_field() -> None:
    """ListGroupsResponse v5 written out by hand from ListGroupsResponse.json, with a tagged field (tag 3)
    in the group and one (tag 0) at the top level that no schema version declares."""
    body = bytes([
        0, 0, 0, 5,        # ThrottleTimeMs int32 = 5
        0, 14,             # ErrorCode int16 = 14 (COORDINATOR_LOAD_IN_PROGRESS)
        2,                 # Groups: compact array of 1 (length + 1)
        2, *b"g",          # GroupId: compact string "g"
        9, *b"consumer",   # ProtocolType "consumer"
        6, *b"Empty",      # GroupState "Empty" (v4+)
        8, *b"classic",    # GroupType "classic" (v5+)
        1, 3, 2, 0xAB, 0xCD,  # the group's tagged fields: 1 field, tag 3, 2 bytes
        1, 0, 0,           # the response's tagged fields: 1 field, tag 0, 0 bytes
    ])
    assert parse_list_groups(5, body) == (14, [ListedGroup("g", "consumer", "Empty", "classic")])


@pytest.mark.parametrize("version", range(3))
def test_consumer_group_describe_requests_are_the_schema_s_bytes(version) -> None:
    assert consumer_group_describe_request(version, ["a", "b"]) == enc.describe_request(version, ["a", "b"])


@pytest.mark.parametrize("version", range(3))
def test_consumer_group_describe_answers_decode_at_every_version(version) -> None:
    body = enc.describe_response(version, [
        enc.group("orders-app", 7, [
            enc.member("m-1", ["orders"], {"orders": [0, 1]}, {"orders": [0]}, epoch=6, rack="az-1",
                       instance_id="host-1", member_type=0, future_field="later"),
            enc.member("m-2", [], {"orders": [2]}, regex="ord.*", epoch=7),
        ], assignor="range", state="Reconciling", future_field="later", group_creation_time_ms=1_700_000),
        enc.group("gone", -1, [], error_code=69, error_message="Group gone does not exist.", state="Dead"),
    ], future_field="later")
    orders = kafka_topic_id(enc.topic_id("orders"))
    kind = (lambda t: t) if version >= 1 else (lambda t: -1)  # MemberType is v1+, default -1
    assert parse_consumer_group_describe(version, body) == [
        DescribedConsumerGroup(0, None, "orders-app", "Reconciling", 7, 7, "range", (
            DescribedMember("m-1", "host-1", "az-1", 6, "client-m-1", "/10.0.0.1", ("orders",), None,
                            (TopicAssignment(orders, "orders", (0,)),),
                            (TopicAssignment(orders, "orders", (0, 1)),), kind(0)),
            DescribedMember("m-2", None, None, 7, "client-m-2", "/10.0.0.1", (), "ord.*", (),
                            (TopicAssignment(orders, "orders", (2,)),), kind(1)),
        )),
        DescribedConsumerGroup(69, "Group gone does not exist.", "gone", "Dead", -1, -1, "uniform", ()),
    ]


def test_a_null_array_the_schema_does_not_allow_is_refused() -> None:
    body = enc.describe_response(0, [enc.RESPONSE_NULL_MEMBERS.DescribedGroup(
        error_code=0, error_message=None, group_id="g", group_state="Stable", group_epoch=1, assignment_epoch=1,
        assignor_name="uniform", members=None)], cls=enc.RESPONSE_NULL_MEMBERS)
    with pytest.raises(WireError, match="Members: null array"):
        parse_consumer_group_describe(0, body)


def test_bytes_that_do_not_follow_the_schema_are_refused() -> None:
    body = enc.describe_response(1, [enc.group("g", 1, [enc.member("m", ["t"], {"t": [0]})])])
    with pytest.raises(WireError, match="truncated"):
        parse_consumer_group_describe(1, body[:-3])
    with pytest.raises(WireError, match="left over"):
        parse_consumer_group_describe(1, body + b"\x00")
    bad_utf8 = enc.list_groups_response(3, [("g", "consumer", "", "")]).replace(b"\x02g", b"\x02\xff")
    with pytest.raises(WireError, match="GroupId: not UTF-8"):
        parse_list_groups(3, bad_utf8)


def test_versions_are_negotiated_from_api_versions() -> None:
    assert negotiate(LIST_GROUPS_REQUEST, (0, 4)) == 4  # the local broker: no TypesFilter
    assert negotiate(LIST_GROUPS_REQUEST, (0, 9)) == 5
    assert negotiate(CONSUMER_GROUP_DESCRIBE_REQUEST, None) is None  # the API is absent
    assert negotiate(CONSUMER_GROUP_DESCRIBE_REQUEST, (0, 1)) == 1
    assert negotiate(CONSUMER_GROUP_DESCRIBE_REQUEST, (3, 4)) is None  # no version in common


def test_flexible_response_headers_carry_a_tagged_section() -> None:
    assert response_correlation(b"\x00\x00\x00\x07\x01\x05\x01\xffBODY", flexible=True) == (7, b"BODY")
    assert response_correlation(b"\x00\x00\x00\x07\x00BODY", flexible=False) == (7, b"\x00BODY")

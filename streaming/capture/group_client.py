"""ListGroups on every broker and ConsumerGroupDescribe at each group's coordinator, in our own encoding
(`streaming.capture.group_messages`), sent over kafka-python's connections so that the capture's client
settings (SASL, TLS) apply.

kafka-python (pinned >=3.0.12,<4 in pyproject.toml) sends any object shaped like its requests; `_RawRequest`
is one that carries bytes we encoded and hands back the response body undecoded. The brokers, their
ApiVersions answers (`get_broker_version_data`) and the group coordinators come from kafka-python's
admin client (the coordinator lookup is its private `_find_coordinator_ids`, as for its own describe).

`list_groups` says, in `GroupListing.note`, what it did instead when the cluster cannot describe
consumer-protocol (KIP-848) groups: without ListGroups v5 and ConsumerGroupDescribe on every broker, only
classic groups are captured.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import kafka.errors as Errors
from kafka import KafkaAdminClient

from streaming.capture.group_messages import (
    CONSUMER_GROUP_DESCRIBE_REQUEST,
    LIST_GROUPS_REQUEST,
    DescribedConsumerGroup,
    ListedGroup,
    consumer_group_describe_request,
    list_groups_request,
    negotiate,
    parse_consumer_group_describe,
    parse_list_groups,
)
from streaming.capture.wire import Message, WireError, request_header, response_correlation

# errors after which the next poll simply asks again (the group moved, is loading, or was just deleted)
_TRANSIENT = {Errors.NotCoordinatorError.errno, Errors.CoordinatorLoadInProgressError.errno,
              Errors.CoordinatorNotAvailableError.errno, Errors.GroupIdNotFoundError.errno}


@dataclass(frozen=True)
class _RawBody:
    body: bytes


class _RawResponseReader:
    """What kafka-python asks of a response class: the header (correlation id), then the body."""

    def __init__(self, flexible: bool) -> None:
        self.flexible = flexible

    def parse_header(self, buffer: Any) -> Any:
        start = buffer.tell()
        data = buffer.read()
        correlation_id, body = response_correlation(data, self.flexible)
        buffer.seek(start + len(data) - len(body))
        return _RawHeader(correlation_id, self)

    def decode(self, buffer: Any) -> _RawBody:
        return _RawBody(buffer.read())


@dataclass
class _RawHeader:
    correlation_id: int
    reader: _RawResponseReader

    def get_response_class(self) -> _RawResponseReader:
        return self.reader


class _RawRequest:
    """A request body we encoded, in the shape kafka-python's connection sends."""

    def __init__(self, message: Message, version: int, body: bytes) -> None:
        self.API_KEY = message.api_key
        self.API_VERSION = version
        self.message = message
        self.body = body
        self.header: _RawHeader | None = None
        self.client_id: str | None = None

    def with_header(self, correlation_id: int = 0, client_id: str | None = None) -> None:
        # requests and responses of these APIs turn flexible at the same version
        self.header = _RawHeader(correlation_id, _RawResponseReader(self.message.flexible(self.API_VERSION)))
        self.client_id = client_id

    def encode(self, framed: bool = False, header: bool = False) -> bytes:
        data = self.body
        if header:
            assert self.header is not None
            data = request_header(self.API_KEY, self.API_VERSION, self.header.correlation_id, self.client_id,
                                  self.message.flexible(self.API_VERSION)) + data
        return len(data).to_bytes(4, "big") + data if framed else data

    def expect_response(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"{self.message.name}_v{self.API_VERSION}({len(self.body)} bytes)"


def _send_all(admin: KafkaAdminClient, requests: Sequence[tuple[int, _RawRequest]]) -> list[bytes]:
    """Each (node id, request) sent; the response bodies in the same order."""

    async def run() -> list[bytes]:
        futures = [admin._manager.send(request, node_id=node) for node, request in requests]
        return [(await f).body for f in futures]

    return admin._manager.run(run) if requests else []


def _api_versions(admin: KafkaAdminClient, node: int) -> dict[int, tuple[int, int]]:
    return dict(admin.get_broker_version_data(node).api_versions)


@dataclass
class GroupListing:
    groups: list[ListedGroup] = field(default_factory=list)
    note: str | None = None  # what the capture does instead when consumer-protocol groups cannot be described


def list_groups(admin: KafkaAdminClient) -> GroupListing:
    """ListGroups on every broker, at the highest version both sides have (v5: the classic and consumer
    groups, each with its type). A broker's error fails the listing (`KafkaError`): a partial listing would
    make the groups of that broker look deleted."""
    nodes = sorted(b.node_id for b in admin._manager.cluster.brokers())
    versions = {n: _api_versions(admin, n) for n in nodes}
    requests = []
    lacking = []
    for n in nodes:
        version = negotiate(LIST_GROUPS_REQUEST, versions[n].get(LIST_GROUPS_REQUEST.api_key))
        if version is None:
            raise Errors.IncompatibleBrokerVersion(f"broker {n} has no ListGroups version this capture speaks")
        requests.append((n, _RawRequest(LIST_GROUPS_REQUEST, version, list_groups_request(version))))
        cgd = negotiate(CONSUMER_GROUP_DESCRIBE_REQUEST, versions[n].get(CONSUMER_GROUP_DESCRIBE_REQUEST.api_key))
        if version < 5 or cgd is None:
            lacking.append(f"broker {n}: ListGroups v{version}, "
                           + ("no ConsumerGroupDescribe" if cgd is None else f"ConsumerGroupDescribe v{cgd}"))
    listing = GroupListing()
    for (n, request), body in zip(requests, _send_all(admin, requests), strict=True):
        try:
            error, groups = parse_list_groups(request.API_VERSION, body)
        except WireError as exc:
            raise Errors.KafkaProtocolError(f"ListGroups v{request.API_VERSION} answer of broker {n}: {exc}") from None
        if error:
            raise Errors.for_code(error)(f"ListGroups on broker {n}")
        listing.groups.extend(groups)
    if lacking:
        listing.note = ("the cluster has no KIP-848 group APIs (" + "; ".join(lacking) + "): capturing classic "
                        "groups only, through DescribeGroups; consumer-protocol groups (group.protocol=consumer) "
                        "are not seen")
    return listing


@dataclass
class ConsumerGroupsDescribed:
    groups: list[DescribedConsumerGroup] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why a group was not described (no API, an error code)
    undecodable: list[str] = field(default_factory=list)  # answers that do not follow the schema


def describe_consumer_groups(admin: KafkaAdminClient, group_ids: Sequence[str]) -> ConsumerGroupsDescribed:
    """ConsumerGroupDescribe of `group_ids` at their coordinators: the groups described, one line per group
    that could not be (a coordinator without the API, an error such as an authorization failure), one per
    answer that does not decode. Groups that moved, are loading or were just deleted are left for the next
    poll."""
    result = ConsumerGroupsDescribed()
    if not group_ids:
        return result
    coordinators = admin._manager.run(admin._find_coordinator_ids, list(group_ids))
    by_node: dict[int, list[str]] = defaultdict(list)
    for group in group_ids:
        by_node[coordinators[group]].append(group)
    requests = []
    for node, groups in sorted(by_node.items()):
        broker = _api_versions(admin, node).get(CONSUMER_GROUP_DESCRIBE_REQUEST.api_key)
        version = negotiate(CONSUMER_GROUP_DESCRIBE_REQUEST, broker)
        if version is None:
            result.skipped.extend(f"group {g!r}: its coordinator, broker {node}, has no ConsumerGroupDescribe"
                                  for g in groups)
            continue
        requests.append((node, _RawRequest(CONSUMER_GROUP_DESCRIBE_REQUEST, version,
                                           consumer_group_describe_request(version, groups))))
    for (node, request), body in zip(requests, _send_all(admin, requests), strict=True):
        try:
            answer = parse_consumer_group_describe(request.API_VERSION, body)
        except WireError as exc:
            result.undecodable.append(f"ConsumerGroupDescribe v{request.API_VERSION} answer of broker {node}: {exc}")
            continue
        for g in answer:
            if g.error_code == 0:
                result.groups.append(g)
            elif g.error_code not in _TRANSIENT:
                name = Errors.for_code(g.error_code).__name__
                result.skipped.append(f"group {g.group_id!r}: ConsumerGroupDescribe error {name}"
                                      + (f" ({g.error_message})" if g.error_message else ""))
    return result

"""A realistic offsets-topic history of several groups, encoded with the independent encoder, and the events a
capture must produce from it (written out by hand).

Groups (their records interleaved in one log):
- ``orders``: classic eager ``range``; GroupMetadataValue v0, v1, v2, v3 in turn, Subscription v0-v2,
  Assignment v0-v1; generations 1, 2, then 5 (3 and 4 never completed), then Empty (6), then a tombstone.
- ``payments``: classic ``cooperative-sticky``, value v3, Subscription v3 (rack, owned partitions, generation),
  static members; generation 2 is stored again after a static member rejoined under a new member id.
- ``legacy``: classic eager ``sticky``, flexible value v4, Subscription v0 whose userData is the sticky
  assignor's: Java's layout for one member, kafka-python 3's (version-prefixed) for the other.
- ``clicks``: a KIP-848 consumer group (records 3-8), server assignor ``range``, two epochs, then deleted.
- ``connect-workers`` (protocol type ``connect``), offset commits, a share-group record (type 9) and one
  undecodable record in between: none of them gives an event.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

import coordinator_encoder as enc

CLICKS_ID = uuid.UUID(int=0x1234)
CLICKS_ID_TEXT = "AAAAAAAAAAAAAAAAAAASNA"  # Kafka's printing of CLICKS_ID


def _member(version_fields: dict[str, Any]) -> Any:
    base = dict(group_instance_id=None, client_id="app", client_host="/10.0.0.1", rebalance_timeout=30000,
                session_timeout=10000)
    base.update(version_fields)
    return enc.member(**base)


def _gm(group: str, version: int, generation: int, protocol: str | None, leader: str | None, ts: int,
        members: list[Any], protocol_type: str = "consumer") -> tuple[bytes, bytes]:
    return enc.key(2, group), enc.value(2, version, protocol_type=protocol_type, generation=generation,
                                        protocol=protocol, leader=leader, current_state_timestamp=ts,
                                        members=members)


def _sticky_java(partitions: list[tuple[str, list[int]]], generation: int) -> bytes:
    out = struct.pack(">i", len(partitions))
    for topic, parts in partitions:
        out += struct.pack(">h", len(topic)) + topic.encode() + struct.pack(f">i{len(parts)}i", len(parts), *parts)
    return out + struct.pack(">i", generation)


def history(t: dict[str, str]) -> list[tuple[bytes | None, bytes | None]]:
    """Records (key, value) in log order; `t` maps the logical topic names orders/payments/legacy/clicks to
    real ones."""
    o, p, lg, c = t["orders"], t["payments"], t["legacy"], t["clicks"]
    sub = enc.subscription
    asg = enc.assignment
    recs: list[tuple[bytes | None, bytes | None]] = []
    # orders generation 1 (v0)
    recs.append(_gm("orders", 0, 1, "range", "a", -1, [
        _member(dict(member_id="a", subscription=sub(0, [o]), assignment=asg(0, [(o, [0, 1, 2])])))]))
    recs.append((enc.key(1, "orders", o, 0), enc.value(1, 1, offset=10, metadata="", commit_timestamp=5,
                                                       expire_timestamp=-1)))
    recs.append(_gm("connect-workers", 3, 1, "sessioned", "w1", 1000, [
        _member(dict(member_id="w1", subscription=b"\x00\x01connect-config", assignment=b"\x00\x01"))],
        protocol_type="connect"))
    # payments generation 1 (v3, cooperative-sticky, static members)
    recs.append(_gm("payments", 3, 1, "cooperative-sticky", "p1", 2000, [
        _member(dict(member_id="p1", group_instance_id="host-1",
                     subscription=sub(3, [p], None, [], -1, "az-1"), assignment=asg(1, [(p, [0, 1, 2, 3])])))]))
    # orders generation 2 (v1)
    recs.append(_gm("orders", 1, 2, "range", "a", -1, [
        _member(dict(member_id="a", subscription=sub(1, [o]), assignment=asg(1, [(o, [0, 1])]))),
        _member(dict(member_id="b", subscription=sub(1, [o]), assignment=asg(1, [(o, [2])])))]))
    recs.append((struct.pack(">h", 9) + struct.pack(">h", 11) + b"share-group", b"\x00\x00whatever"))
    recs.append((b"\x00\x02\x00\x09too-short", b"\x00\x03"))  # undecodable: reported and skipped
    # payments generation 2: p2 joins; p1 reports what it owned in generation 1
    recs.append(_gm("payments", 3, 2, "cooperative-sticky", "p1", 3000, [
        _member(dict(member_id="p1", group_instance_id="host-1",
                     subscription=sub(3, [p], None, [(p, [0, 1, 2, 3])], 1, "az-1"),
                     assignment=asg(2, [(p, [0, 1])]))),
        _member(dict(member_id="p2", group_instance_id="host-2",
                     subscription=sub(3, [p], None, [], -1, "az-2"), assignment=asg(2, [])))]))
    # payments generation 2 stored again: host-2 restarted as p2b (static member, no rebalance)
    recs.append(_gm("payments", 3, 2, "cooperative-sticky", "p1", 3500, [
        _member(dict(member_id="p1", group_instance_id="host-1",
                     subscription=sub(3, [p], None, [(p, [0, 1, 2, 3])], 1, "az-1"),
                     assignment=asg(2, [(p, [0, 1])]))),
        _member(dict(member_id="p2b", group_instance_id="host-2",
                     subscription=sub(3, [p], None, [], -1, "az-2"), assignment=asg(2, [])))]))
    # legacy generation 3 (flexible v4, eager sticky with userData)
    recs.append(_gm("legacy", 4, 3, "sticky", "l1", 4000, [
        _member(dict(member_id="l1", subscription=sub(0, [lg], _sticky_java([(lg, [0])], 2)),
                     assignment=asg(0, [(lg, [0])]))),
        _member(dict(member_id="l2", subscription=sub(0, [lg], struct.pack(">h", 1) + _sticky_java([(lg, [1])], 2)),
                     assignment=asg(0, [(lg, [1])])))]))
    # clicks: KIP-848, two members, server assignor range
    pm = enc.struct_class("ConsumerGroupPartitionMetadataValue")
    for mid, host in (("c1", "/10.0.0.5"), ("c2", "/10.0.0.6")):
        recs.append((enc.key(5, "clicks", mid), enc.value(
            5, 0, instance_id=None, rack_id=None, client_id="clk", client_host=host, subscribed_topic_names=[c],
            subscribed_topic_regex=None, rebalance_timeout_ms=30000, server_assignor="range")))
    recs.append((enc.key(4, "clicks"), enc.value(4, 0, topics=[pm.TopicMetadata(
        topic_id=CLICKS_ID, topic_name=c, num_partitions=4, partition_metadata=[])])))
    recs.append((enc.key(3, "clicks"), enc.value(3, 0, epoch=1)))
    recs.append((enc.key(7, "clicks", "c1"), enc.value(7, 0, topic_partitions=[(CLICKS_ID, [0, 1])])))
    recs.append((enc.key(7, "clicks", "c2"), enc.value(7, 0, topic_partitions=[(CLICKS_ID, [2, 3])])))
    recs.append((enc.key(6, "clicks"), enc.value(6, 0, assignment_epoch=1)))
    for mid, parts in (("c1", [0, 1]), ("c2", [2, 3])):
        recs.append((enc.key(8, "clicks", mid), enc.value(8, 0, member_epoch=1, previous_member_epoch=0, state=0,
                                                          assigned_partitions=[(CLICKS_ID, parts)],
                                                          partitions_pending_revocation=[])))
    # orders generation 5 (v2): generations 3 and 4 never completed
    recs.append(_gm("orders", 2, 5, "range", "a", 5000, [
        _member(dict(member_id="a", subscription=sub(2, [o], None, [], 2), assignment=asg(1, [(o, [0])]))),
        _member(dict(member_id="b", subscription=sub(2, [o], None, [], 2), assignment=asg(1, [(o, [1])]))),
        _member(dict(member_id="c", subscription=sub(2, [o], None, [], -1), assignment=asg(1, [(o, [2])])))]))
    # clicks: c2 leaves, epoch 2 gives everything to c1
    for rt in (5, 7, 8):
        recs.append((enc.key(rt, "clicks", "c2"), None))
    recs.append((enc.key(3, "clicks"), enc.value(3, 0, epoch=2)))
    recs.append((enc.key(7, "clicks", "c1"), enc.value(7, 0, topic_partitions=[(CLICKS_ID, [0, 1, 2, 3])])))
    recs.append((enc.key(6, "clicks"), enc.value(6, 0, assignment_epoch=2)))
    # orders becomes Empty (v3), then is deleted
    recs.append(_gm("orders", 3, 6, None, None, 6000, []))
    recs.append((enc.key(1, "orders", o, 0), enc.value(1, 3, offset=20, leader_epoch=0, metadata="",
                                                       commit_timestamp=6001)))
    recs.append((enc.key(2, "orders"), None))
    recs.append((enc.key(2, "connect-workers"), None))
    # clicks deleted: tombstones of every record, the group epoch last
    for rt, mid in ((8, "c1"), (7, "c1"), (5, "c1"), (6, None), (4, None), (3, None)):
        recs.append((enc.key(rt, "clicks", *(() if mid is None else (mid,))), None))
    return recs


UNDECODABLE_INDEX = 6  # position of the undecodable record in `history`


def expected_events(t: dict[str, str], ts: int = 777) -> dict[str, list[dict[str, Any]]]:
    """Per group, the events in order (without `source`); `ts` is the records' own timestamp, used where the
    record carries no currentStateTimestamp (value v0/v1, KIP-848 records, tombstones)."""
    o, p, lg, c = t["orders"], t["payments"], t["legacy"], t["clicks"]

    def m(topics: list[str], assigned: dict[str, list[int]], **extra: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"topics": topics, "rack": None, "instance_id": None}
        out.update(extra)
        out["assigned"] = assigned
        out.setdefault("client_id", "app")
        out.setdefault("client_host", "/10.0.0.1")
        return out

    def gen(group: str, g: int, protocol: str | None, leader: str | None, at: int, members: dict) -> dict:
        return {"group": group, "type": "generation", "generation": g, "protocol_type": "consumer",
                "protocol": protocol, "leader": leader, "ts": at, "members": members}

    def parts(group: str, counts: dict[str, int], at: int) -> dict:
        return {"group": group, "type": "partitions", "partitions": counts, "ts": at}

    def owned(part_list: dict, generation: int | None = None) -> dict:
        out: dict[str, Any] = {"owned": part_list}
        if generation is not None:
            out["owned_generation"] = generation
        return out

    def pay(mid: str, inst: str, rack: str, own: dict, og: int, assigned: dict) -> dict:
        d = m([p], assigned, owned=own, owned_generation=og)
        d["rack"], d["instance_id"] = rack, inst
        return d

    return {
        "orders": [
            parts("orders", {o: 3}, ts),
            gen("orders", 1, "range", "a", ts, {"a": m([o], {o: [0, 1, 2]})}),
            gen("orders", 2, "range", "a", ts, {"a": m([o], {o: [0, 1]}, **owned({})),
                                                "b": m([o], {o: [2]}, **owned({}))}),
            gen("orders", 5, "range", "a", 5000, {"a": m([o], {o: [0]}, **owned({}, 2)),
                                                  "b": m([o], {o: [1]}, **owned({}, 2)),
                                                  "c": m([o], {o: [2]}, **owned({}, -1))}),
            gen("orders", 6, None, None, 6000, {}),
            {"group": "orders", "type": "delete_group", "ts": ts},
        ],
        "payments": [
            parts("payments", {p: 4}, 2000),
            gen("payments", 1, "cooperative-sticky", "p1", 2000, {
                "p1": pay("p1", "host-1", "az-1", {}, -1, {p: [0, 1, 2, 3]})}),
            gen("payments", 2, "cooperative-sticky", "p1", 3000, {
                "p1": pay("p1", "host-1", "az-1", {p: [0, 1, 2, 3]}, 1, {p: [0, 1]}),
                "p2": pay("p2", "host-2", "az-2", {}, -1, {})}),
            {"group": "payments", "type": "join", "member": "p2b", "topics": [p], "rack": "az-2",
             "instance_id": "host-2", "ts": 3500},
        ],
        "legacy": [
            parts("legacy", {lg: 2}, 4000),
            gen("legacy", 3, "sticky", "l1", 4000, {"l1": m([lg], {lg: [0]}, **owned({lg: [0]}, 2)),
                                                    "l2": m([lg], {lg: [1]}, **owned({lg: [1]}, 2))}),
        ],
        "clicks": [
            parts("clicks", {c: 4}, ts),
            gen("clicks", 1, "server-range", None, ts, {
                "c1": {"topics": [c], "rack": None, "instance_id": None, "assigned": {c: [0, 1]},
                       "client_id": "clk", "client_host": "/10.0.0.5"},
                "c2": {"topics": [c], "rack": None, "instance_id": None, "assigned": {c: [2, 3]},
                       "client_id": "clk", "client_host": "/10.0.0.6"}}),
            gen("clicks", 2, "server-range", None, ts, {
                "c1": {"topics": [c], "rack": None, "instance_id": None, "owned": {c: [0, 1]},
                       "owned_generation": 1, "assigned": {c: [0, 1, 2, 3]}, "client_id": "clk",
                       "client_host": "/10.0.0.5"}}),
            {"group": "clicks", "type": "delete_group", "ts": ts},
        ],
    }

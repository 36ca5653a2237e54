"""A group snapshot as JSON (the input of `rebalance assign`) -> the arguments of `assignors.assign`.

Format: `{"topics": {t: n}, "members": {id: {"topics": [...], "owned": [[t, p], ...], "generation": g,
"rack": r, "instance_id": i, "weight": w}}, "partition_racks": {t: [[rack, ...], ...]}}`; member fields other than
`topics` and the whole `partition_racks` are optional. Errors are `ValueError`s that name the offending
field by its JSON path (`members.c-1.owned[2]: ...`), so a user can find it in the file. Unknown fields
are rejected: in a hand-written snapshot they are typos that would silently change the result.
"""

from __future__ import annotations

from typing import Any

from assignors.model import Member

MAX_PARTITIONS = 10_000_000  # total over all topics
MAX_MEMBERS = 100_000
_TOP_FIELDS = {"topics", "members", "partition_racks"}
_MEMBER_FIELDS = {"topics", "owned", "generation", "rack", "instance_id", "weight"}


def _int(value: Any, where: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: expected an integer, got {_kind(value)}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{where}: must be >= {minimum}, got {value}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a string, got {_kind(value)}")
    return value


def _list(value: Any, where: str, what: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list of {what}, got {_kind(value)}")
    return value


def _object(value: Any, where: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object of {what}, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _unknown(obj: dict, allowed: set[str], where: str) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        prefix = f"{where}." if where else ""
        raise ValueError(f"{prefix}{extra[0]}: unknown field (expected one of {', '.join(sorted(allowed))})")


def load_snapshot(data: Any) -> tuple[dict[str, int], dict[str, Member], dict[str, list[list[str | None]]] | None]:
    """Validate a parsed snapshot and return `(topics, members, partition_racks)`."""
    snapshot = _object(data, "snapshot", "topics, members and partition_racks")
    _unknown(snapshot, _TOP_FIELDS, "")
    for required in ("topics", "members"):
        if required not in snapshot:
            raise ValueError(f"{required}: required field is missing")

    topics: dict[str, int] = {}
    total = 0
    for name, count in _object(snapshot["topics"], "topics", "topic -> partition count").items():
        topics[name] = _int(count, f"topics.{name}", minimum=0)
        total += topics[name]
        if total > MAX_PARTITIONS:
            raise ValueError(f"topics.{name}: more than {MAX_PARTITIONS} partitions in total")

    raw_members = _object(snapshot["members"], "members", "member id -> member")
    if len(raw_members) > MAX_MEMBERS:
        raise ValueError(f"members: {len(raw_members)} members, at most {MAX_MEMBERS} allowed")
    members = {mid: _member(raw, f"members.{mid}") for mid, raw in raw_members.items()}

    racks = snapshot.get("partition_racks")
    return topics, members, None if racks is None else _partition_racks(racks, topics)


def _member(raw: Any, where: str) -> Member:
    obj = _object(raw, where, "member fields")
    _unknown(obj, _MEMBER_FIELDS, where)
    if "topics" not in obj:
        raise ValueError(f"{where}.topics: required field is missing")
    names = _list(obj["topics"], f"{where}.topics", "topic names")
    topics = [_str(t, f"{where}.topics[{i}]") for i, t in enumerate(names)]
    owned = []
    for i, pair in enumerate(_list(obj.get("owned", []), f"{where}.owned", "[topic, partition] pairs")):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError(f"{where}.owned[{i}]: expected a [topic, partition] pair, got {_kind(pair)}")
        owned.append((_str(pair[0], f"{where}.owned[{i}][0]"), _int(pair[1], f"{where}.owned[{i}][1]", minimum=0)))
    generation = _int(obj.get("generation", -1), f"{where}.generation")
    rack = obj.get("rack")
    instance_id = obj.get("instance_id")
    return Member(
        topics=topics,
        owned=owned,
        generation=generation,
        rack=None if rack is None else _str(rack, f"{where}.rack"),
        instance_id=None if instance_id is None else _str(instance_id, f"{where}.instance_id"),
        weight=obj.get("weight", 1),  # checked by build_spec, with the field named
    )


def _partition_racks(raw: Any, topics: dict[str, int]) -> dict[str, list[list[str | None]]]:
    out = {}
    for topic, per_partition in _object(raw, "partition_racks", "topic -> replica racks per partition").items():
        where = f"partition_racks.{topic}"
        entries = _list(per_partition, where, "replica rack lists, one per partition")
        if topic in topics and len(entries) > topics[topic]:
            raise ValueError(f"{where}: {len(entries)} entries for {topics[topic]} partitions")
        out[topic] = [_replica_racks(e, f"{where}[{p}]") for p, e in enumerate(entries)]
    return out


def _replica_racks(raw: Any, where: str) -> list[str | None]:
    """One partition's replica racks; null stands for a broker without a rack."""
    return [None if r is None else _str(r, f"{where}[{j}]") for j, r in enumerate(_list(raw, where, "racks"))]

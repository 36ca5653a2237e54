"""Membership events (docs/events-and-diffs.md): routing key, parsing and validation of one event.

Validation here covers everything that can be judged from the event alone (JSON shape, types, size
limits); what needs the group's state (unknown member, shrinking topic, group-wide limits) is judged by
`streaming.core.group_state`. Both raise `InvalidEvent`, whose message becomes the dead letter's reason.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Final

from assignors.partitioner import murmur2
from streaming.core import jsontext
from streaming.core.config import Limits
from streaming.core.traffic import MAX_RATE, TopicTraffic

_DEFAULT_LIMITS = Limits()
_SURROGATE = re.compile(r"[\ud800-\udfff]")  # JSON "\\ud800" escapes give strings UTF-8 cannot encode
_NUMBER_TYPES: Final = frozenset({int, float})  # JSON numbers (bool is a type of its own here)
# a traffic key -> toPositive(murmur2(its UTF-8 bytes)): keyed traffic events of a topic repeat their keys
_KEY_HASHES: Final[dict[str, int]] = {}
_KEPT_KEY_HASHES: Final = 65_536
EVENT_TYPES = ("join", "leave", "subscribe", "partitions", "delete_topic", "generation", "delete_group", "traffic")


class InvalidEvent(ValueError):
    """An event that must go to the dead-letter output; the message is the reason."""

    def __init__(self, reason: str, group: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.group = group


# The events a valid line makes, one per line: dataclasses for equality and repr, with an `__init__` of their own
# (in the compiled build, the one `dataclasses` generates is interpreted: about 0.5 µs more per event); not
# frozen, as a frozen class may only set its fields through `object.__setattr__`. Nothing modifies an event.


@dataclass
class Metadata:
    """Topic metadata carried by `partitions` (and optionally `join`) events."""

    partitions: dict[str, int]  # topic -> partition count, event order
    partition_racks: dict[str, list[list[str]]]  # topic -> replica racks per partition (KIP-881), may be empty

    def __init__(self, partitions: dict[str, int], partition_racks: dict[str, list[list[str]]]) -> None:
        self.partitions = partitions
        self.partition_racks = partition_racks


@dataclass
class Join:
    group: str
    member: str
    topics: tuple[str, ...]  # deduplicated, order kept
    rack: str | None
    instance_id: str | None
    metadata: Metadata | None
    ts: int | None
    weight: float = 1.0  # > 0, `weighted-sticky`'s share

    def __init__(self, group: str, member: str, topics: tuple[str, ...], rack: str | None, instance_id: str | None,
                 metadata: Metadata | None, ts: int | None, weight: float = 1.0) -> None:
        self.group = group
        self.member = member
        self.topics = topics
        self.rack = rack
        self.instance_id = instance_id
        self.metadata = metadata
        self.ts = ts
        self.weight = weight


@dataclass
class Leave:
    group: str
    member: str
    ts: int | None

    def __init__(self, group: str, member: str, ts: int | None) -> None:
        self.group = group
        self.member = member
        self.ts = ts


@dataclass
class Subscribe:
    group: str
    member: str
    topics: tuple[str, ...]
    ts: int | None

    def __init__(self, group: str, member: str, topics: tuple[str, ...], ts: int | None) -> None:
        self.group = group
        self.member = member
        self.topics = topics
        self.ts = ts


@dataclass
class Partitions:
    group: str
    metadata: Metadata
    ts: int | None

    def __init__(self, group: str, metadata: Metadata, ts: int | None) -> None:
        self.group = group
        self.metadata = metadata
        self.ts = ts


@dataclass
class DeleteTopic:
    group: str
    topic: str
    ts: int | None

    def __init__(self, group: str, topic: str, ts: int | None) -> None:
        self.group = group
        self.topic = topic
        self.ts = ts


@dataclass(frozen=True)
class GenerationMember:
    """One member of a recorded generation; `assigned` is None when the record did not carry it."""

    id: str
    topics: tuple[str, ...]
    rack: str | None
    instance_id: str | None
    assigned: dict[str, tuple[int, ...]] | None
    weight: float = 1.0  # > 0, `weighted-sticky`'s share (what the member's userData announced)


@dataclass(frozen=True)
class Generation:
    """One completed rebalance as the group coordinator recorded it (`rebalance capture`)."""

    group: str
    generation: int
    protocol: str | None
    members: tuple[GenerationMember, ...]  # the whole membership after the rebalance, record order
    ts: int | None
    rebalance_ms: int | None = None  # how long the capture saw this classic rebalance last (docs/capture.md)


@dataclass
class DeleteGroup:
    group: str
    ts: int | None

    def __init__(self, group: str, ts: int | None) -> None:
        self.group = group
        self.ts = ts


@dataclass
class Traffic:
    """One topic's msgs/s as this group sees it (`streaming.core.traffic`); its length against the group's
    partition count is judged by `streaming.core.group_state`."""

    group: str
    topic: str
    traffic: TopicTraffic
    ts: int | None

    def __init__(self, group: str, topic: str, traffic: TopicTraffic, ts: int | None) -> None:
        self.group = group
        self.topic = topic
        self.traffic = traffic
        self.ts = ts


Event = Join | Leave | Subscribe | Partitions | DeleteTopic | Generation | DeleteGroup | Traffic


_SHARED_BYTES: Final = 4_096  # events up to this size keep their parsed object for a while (bounded memory)
_SHARED_ENTRIES: Final = 2_048  # per generation: a micro-batch of the local loop fits in the two
_recent: Final[dict[bytes, dict[str, Any]]] = {}
_older: Final[dict[bytes, dict[str, Any]]] = {}


def _load_object(value: bytes | None, max_event_bytes: int, size: int | None = None) -> dict[str, Any]:
    """The event's JSON object; `size` is the original's length when `value` is a prefix of it.

    A small event is parsed once for `group_key` and `parse_event` both (the local loop routes a whole
    batch, then steps it): the object is shared, so neither may modify it. Two generations of dicts keep the
    last `_SHARED_ENTRIES` to twice that many objects (cheaper than `functools.lru_cache`'s key tuples and links);
    an event over the limit never reaches them."""
    if type(value) is bytes and size is None and len(value) <= _SHARED_BYTES and len(value) <= max_event_bytes:
        obj = _recent.get(value)
        if obj is None:
            obj = _older.get(value)
            if obj is None:
                obj = _parse_object(value, max_event_bytes)
            if len(_recent) >= _SHARED_ENTRIES:
                _older.clear()
                _older.update(_recent)
                _recent.clear()
            _recent[value] = obj
        return obj
    return _parse_object(value, max_event_bytes, size)


def _parse_object(value: bytes | None, max_event_bytes: int, size: int | None = None) -> dict[str, Any]:
    if value is None:
        raise InvalidEvent("record has no value")
    size = len(value) if size is None else size
    if size > max_event_bytes:
        raise InvalidEvent(f"event of {size} bytes exceeds the limit of {max_event_bytes} bytes")
    try:
        text = (value if type(value) is bytes else bytes(value)).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidEvent(f"not UTF-8: {exc}") from None
    try:
        obj = jsontext.loads(text)
    except json.JSONDecodeError as exc:
        hint = "; one JSON object per line is expected (pretty-printed JSON?)" if _pretty_printed(text) else ""
        raise InvalidEvent(f"invalid JSON: {exc}{hint}") from None
    except ValueError as exc:
        raise InvalidEvent(f"invalid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise InvalidEvent(f"not a JSON object but {_json_type(obj)}")
    return obj


def _pretty_printed(text: str) -> bool:
    """Whether a line looks like a piece of JSON spread over lines: a lone bracket or a `"key": value,`."""
    s = text.strip()
    return s in ("{", "[", "}", "]", "},", "],") or (s.startswith('"') and s.endswith((",", "{", "[")))


def group_key(value: bytes | None, key: bytes | None, *, size: int | None = None,
              max_event_bytes: int = _DEFAULT_LIMITS.max_event_bytes,
              max_name_chars: int = _DEFAULT_LIMITS.max_name_chars) -> str:
    """The event's group id for Spark's `groupBy`, or "" (the dead-letter lane). Never raises.

    Routing uses the value's `group`, not the Kafka key, so that a file replay and a topic replay route
    alike; `step` dead-letters an event whose group differs from the lane it was routed to.
    """
    del key  # routing is by the value; the parameter keeps the adapter's call site uniform
    try:
        group = _load_object(value, max_event_bytes, size).get("group")
    except Exception:
        return ""
    if isinstance(group, str) and 0 < len(group) <= max_name_chars and _is_text(group):
        return group
    return ""


def parse_event(value: bytes | None, limits: Limits = _DEFAULT_LIMITS, size: int | None = None) -> Event:
    """One validated event, or `InvalidEvent` with the reason (and the group when it is known).

    `size`: the original's length when `value` is only a prefix of it (an over-long line, `core.lines`)."""
    obj = _load_object(value, limits.max_event_bytes, size)
    fields = _Fields(obj, limits)
    group = fields.name("group")
    fields.group = group
    kind = obj.get("type")
    if kind not in EVENT_TYPES:
        what = "missing" if kind is None else f"unknown type {kind!r}" if isinstance(kind, str) else _json_type(kind)
        raise InvalidEvent(f"field 'type': {what}; expected one of {', '.join(EVENT_TYPES)}", group)
    ts = fields.ts()
    if kind == "join":
        metadata = fields.metadata(required=False)
        return Join(group, fields.name("member"), fields.topics(), fields.optional_name("rack", empty_is_none=True),
                    fields.optional_name("instance_id"), metadata, ts, fields.weight())
    if kind == "leave":
        return Leave(group, fields.name("member"), ts)
    if kind == "subscribe":
        return Subscribe(group, fields.name("member"), fields.topics(), ts)
    if kind == "partitions":
        metadata = fields.metadata(required=True)
        assert metadata is not None
        return Partitions(group, metadata, ts)
    if kind == "generation":
        return fields.generation(group, ts)
    if kind == "delete_group":
        return DeleteGroup(group, ts)
    if kind == "traffic":
        return Traffic(group, fields.name("topic"), fields.traffic(), ts)
    return DeleteTopic(group, fields.name("topic"), ts)


def _is_text(s: str) -> bool:
    return s.isascii() or _SURROGATE.search(s) is None


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class _Fields:
    """Typed access to the fields of one event object; every failure names the field."""

    def __init__(self, obj: dict[str, Any], limits: Limits) -> None:
        self.obj = obj
        self.limits = limits
        self.group: str | None = None
        self.prefix = ""  # field path of a nested object ("members.c-1.")

    def fail(self, where: str, what: str) -> InvalidEvent:
        return InvalidEvent(f"field {self.prefix + where!r}: {what}", self.group)

    def _check_name(self, value: object, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, got {_json_type(value)}")
        if not value:
            raise self.fail(where, "must not be empty")
        if len(value) > self.limits.max_name_chars:
            raise self.fail(where, f"{len(value)} characters exceed the limit of {self.limits.max_name_chars}")
        if not _is_text(value):
            raise self.fail(where, "contains an unpaired UTF-16 surrogate escape")
        return value

    def name(self, key: str) -> str:
        if key not in self.obj:
            raise self.fail(key, "missing")
        return self._check_name(self.obj[key], key)

    def optional_name(self, key: str, *, empty_is_none: bool = False) -> str | None:
        value = self.obj.get(key)
        if value is None or (empty_is_none and value == ""):
            return None  # Kafka stores an empty client.rack as absent
        return self._check_name(value, key)

    def weight(self) -> float:
        value = self.obj.get("weight")
        if value is None:
            return 1.0
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail("weight", f"expected a positive number, got {_json_type(value)}")
        if not math.isfinite(value) or value <= 0:
            raise self.fail("weight", f"expected a positive number, got {value}")
        return float(value)

    def rate(self, key: str, where: str | None = None, value: object = None) -> float:
        """A number of msgs/s (or a key weight): finite, in [0, MAX_RATE]; `value` given: the entry `where`."""
        if where is None:
            where, value = key, self.obj.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(where, f"expected a number >= 0, got {_json_type(value)}")
        if isinstance(value, int) and not 0 <= value <= MAX_RATE:
            raise self.fail(where, f"expected a number in [0, {MAX_RATE:g}], got {value}")
        number = float(value)
        if not math.isfinite(number) or not 0 <= number <= MAX_RATE:
            raise self.fail(where, f"expected a finite number in [0, {MAX_RATE:g}], got {value}")
        return number

    def rates(self, key: str, values: list, names: list[str] | None = None) -> tuple[float, ...]:
        """`values` as `rate`s (each checked like one); a bad entry is named `key[i]` (`key.name` with `names`).
        The plain case is judged by C loops over the list (types, least, greatest, and the fsum, which is NaN when
        an entry is: `min` and `max` may step over a NaN); the slow path names the bad entry."""
        if (values and set(map(type, values)) <= _NUMBER_TYPES and min(values) >= 0 and max(values) <= MAX_RATE
                and math.isfinite(math.fsum(values))):
            return tuple(map(float, values))
        return tuple([self.rate(key, f"{key}[{i}]" if names is None else f"{key}.{names[i]}", v)  # names the bad one
                      for i, v in enumerate(values)])

    def traffic(self) -> TopicTraffic:
        """A `traffic` event's rates: `rates` (one number per partition) or `rate` + `keys` + `null_share`."""
        obj = self.obj
        raw = obj.get("rates")
        if raw is not None:
            for other in ("rate", "keys", "null_share"):
                if obj.get(other) is not None:
                    raise self.fail(other, "given with 'rates' (one form or the other)")
            if not isinstance(raw, list):
                raise self.fail("rates", f"expected an array of msgs/s per partition, got {_json_type(raw)}")
            if not raw:
                raise self.fail("rates", "must not be empty (one number per partition)")
            if len(raw) > self.limits.max_partitions_per_topic:
                raise self.fail("rates", f"{len(raw)} rates exceed the limit of "
                                         f"{self.limits.max_partitions_per_topic} partitions")
            return TopicTraffic(self.rates("rates", raw), 0.0, (), (), 0.0)
        if obj.get("rate") is None:
            raise self.fail("rate", "missing (or give 'rates', one number per partition)")
        rate = self.rate("rate")
        keys = obj.get("keys")
        hashes: list[int] = []
        weights: list[float] = []
        if keys is not None:
            if not isinstance(keys, dict):
                raise self.fail("keys", f"expected an object of key -> weight, got {_json_type(keys)}")
            for key in keys:
                h = _KEY_HASHES.get(key)
                if h is None:
                    if not _is_text(key):
                        raise self.fail("keys", "a key contains an unpaired UTF-16 surrogate escape")
                    if len(_KEY_HASHES) >= _KEPT_KEY_HASHES:
                        _KEY_HASHES.clear()
                    h = _KEY_HASHES[key] = murmur2(key.encode("utf-8")) & 0x7FFFFFFF
                hashes.append(h)
            weights = list(self.rates("keys", list(keys.values()), list(keys)))
        share = obj.get("null_share")
        if share is None:
            null_share = 0.0 if weights else 1.0
        elif isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            what = _json_type(share) if isinstance(share, bool) or not isinstance(share, (int, float)) else share
            raise self.fail("null_share", f"expected a number in [0, 1], got {what}")
        else:
            null_share = float(share)
        return TopicTraffic(None, rate, tuple(hashes), tuple(weights), null_share)

    def ts(self) -> int | None:
        value = self.obj.get("ts")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail("ts", f"expected an integer (epoch ms), got {_json_type(value)}")
        if not 0 <= value < 1 << 63:
            raise self.fail("ts", f"out of range: {value}")
        return value

    def integer(self, key: str, low: int, high: int, *, required: bool) -> int | None:
        value = self.obj.get(key)
        if value is None:
            if required:
                raise self.fail(key, "missing")
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {_json_type(value)}")
        if not low <= value <= high:
            raise self.fail(key, f"out of range [{low}, {high}]: {value}")
        return value

    def generation(self, group: str, ts: int | None) -> Generation:
        """A `generation` event: the members' fields are checked like a `join`'s, their partition lists
        against the limits; `owned`/`owned_generation`/`client_*` are checked for type only."""
        number = self.integer("generation", 0, (1 << 31) - 1, required=True)
        protocol = self.obj.get("protocol")
        if protocol is not None:
            protocol = self._check_name(protocol, "protocol")
        raw = self.obj.get("members")
        if not isinstance(raw, dict):
            raise self.fail("members", "missing" if raw is None else f"expected an object of member id -> member, "
                                                                    f"got {_json_type(raw)}")
        if len(raw) > self.limits.max_members_per_group:
            raise self.fail("members", f"{len(raw)} members exceed the limit of {self.limits.max_members_per_group}")
        members = []
        instances: dict[str, str] = {}
        listed = 0
        for mid, value in raw.items():
            self._check_name(mid, "members")
            where = f"members.{mid}"
            if not isinstance(value, dict):
                raise self.fail(where, f"expected an object, got {_json_type(value)}")
            sub = _Fields(value, self.limits)
            sub.group = self.group
            sub.prefix = f"{where}."
            instance_id = sub.optional_name("instance_id")
            if instance_id is not None and instances.setdefault(instance_id, mid) != mid:
                raise self.fail(f"{where}.instance_id", f"{instance_id!r} is also held by {instances[instance_id]!r}")
            sub.integer("owned_generation", -1, (1 << 31) - 1, required=False)
            sub.partition_lists("owned")
            for key in ("client_id", "client_host"):
                if value.get(key) is not None and not isinstance(value[key], str):
                    raise sub.fail(key, f"expected a string, got {_json_type(value[key])}")
            assigned = sub.partition_lists("assigned")
            listed += sum(len(p) for p in assigned.values()) if assigned else 0
            if listed > self.limits.max_partitions_per_group:
                raise self.fail("members", f"more than {self.limits.max_partitions_per_group} assigned partitions")
            members.append(GenerationMember(mid, sub.topics(), sub.optional_name("rack", empty_is_none=True),
                                            instance_id, assigned, sub.weight()))
        return Generation(group, number, protocol, tuple(members), ts,  # type: ignore[arg-type]
                          self.integer("rebalance_ms", 0, (1 << 63) - 1, required=False))

    def partition_lists(self, key: str) -> dict[str, tuple[int, ...]] | None:
        """`{topic: [partition, ...]}` (optional): partitions are distinct integers within the topic limit."""
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(key, f"expected an object of topic -> partitions, got {_json_type(value)}")
        out: dict[str, tuple[int, ...]] = {}
        high = self.limits.max_partitions_per_topic
        for topic, parts in value.items():
            self._check_name(topic, key)
            where = f"{key}.{topic}"
            if not isinstance(parts, list):
                raise self.fail(where, f"expected an array of partition numbers, got {_json_type(parts)}")
            if len(parts) > high:
                raise self.fail(where, f"{len(parts)} partitions exceed the limit of {high}")
            for p in parts:
                if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < high:
                    raise self.fail(where, f"expected partition numbers in [0, {high}), got {p!r}")
            if len(set(parts)) != len(parts):
                raise self.fail(where, "a partition is listed twice")
            out[topic] = tuple(parts)
        return out

    def topics(self) -> tuple[str, ...]:
        value = self.obj.get("topics")
        if value is None:
            raise self.fail("topics", "missing")
        if not isinstance(value, list):
            raise self.fail("topics", f"expected an array of topic names, got {_json_type(value)}")
        if len(value) > self.limits.max_topics_per_subscription:
            raise self.fail("topics", f"{len(value)} topics exceed the limit of "
                                      f"{self.limits.max_topics_per_subscription}")
        limit = self.limits.max_name_chars
        if not all(type(t) is str and 0 < len(t) <= limit and _is_text(t) for t in value):
            for i, t in enumerate(value):  # the slow path names the bad entry
                self._check_name(t, f"topics[{i}]")
        return tuple(dict.fromkeys(value))  # first occurrences, in order

    def metadata(self, *, required: bool) -> Metadata | None:
        value = self.obj.get("partitions")
        racks = self.obj.get("partition_racks")
        if value is None:
            if required:
                raise self.fail("partitions", "missing")
            if racks is not None:
                raise self.fail("partition_racks", "given without 'partitions'")
            return None
        if not isinstance(value, dict):
            raise self.fail("partitions", f"expected an object of topic -> partition count, got {_json_type(value)}")
        if len(value) > self.limits.max_topics_per_group:
            raise self.fail("partitions", f"{len(value)} topics exceed the limit of {self.limits.max_topics_per_group}")
        counts: dict[str, int] = {}
        for topic, count in value.items():
            where = f"partitions.{topic}"
            self._check_name(topic, "partitions")
            if isinstance(count, bool) or not isinstance(count, int):
                raise self.fail(where, f"expected an integer partition count, got {_json_type(count)}")
            if count < 1:
                raise self.fail(where, f"partition count must be >= 1, got {count}")
            if count > self.limits.max_partitions_per_topic:
                raise self.fail(where, f"partition count {count} exceeds the limit of "
                                       f"{self.limits.max_partitions_per_topic}")
            counts[topic] = count
        return Metadata(counts, self._partition_racks(racks))

    def _partition_racks(self, value: object) -> dict[str, list[list[str]]]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail("partition_racks", f"expected an object of topic -> racks per partition, "
                                               f"got {_json_type(value)}")
        out: dict[str, list[list[str]]] = {}
        for topic, per_partition in value.items():
            where = f"partition_racks.{topic}"
            self._check_name(topic, "partition_racks")
            if not isinstance(per_partition, list):
                raise self.fail(where, f"expected an array (one rack list per partition), got "
                                       f"{_json_type(per_partition)}")
            if len(per_partition) > self.limits.max_partitions_per_topic:
                raise self.fail(where, f"{len(per_partition)} entries exceed the limit of "
                                       f"{self.limits.max_partitions_per_topic}")
            rows: list[list[str]] = []
            for p, replicas in enumerate(per_partition):
                if not isinstance(replicas, list):
                    raise self.fail(f"{where}[{p}]", f"expected an array of rack names, got {_json_type(replicas)}")
                if len(replicas) > self.limits.max_replicas_per_partition:
                    raise self.fail(f"{where}[{p}]", f"{len(replicas)} replicas exceed the limit of "
                                                     f"{self.limits.max_replicas_per_partition}")
                # a replica on a broker without a rack (null) carries no rack, as in Kafka
                rows.append([self._check_name(r, f"{where}[{p}]") for r in replicas if r is not None])
            out[topic] = rows
        return out

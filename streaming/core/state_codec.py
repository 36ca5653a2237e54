"""A group's persisted state and its compact binary blob (Spark keeps it as one `binary` state column).

Why a blob: Spark 4.3 converts array/map state columns through a slow JVM unpickler and breaks on them
(docs/spark-notes.md §1), while one `bytes` value costs nothing. The blob is a version byte followed by
zlib-compressed payload: a small JSON header (names, generations) and flat little-endian numpy arrays
(owner per partition per strategy in the narrowest unsigned dtype, subscriptions as topic indices).
No pickle: a blob is data, never code.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field
from itertools import accumulate, pairwise

import numpy as np
import orjson

from streaming.core.traffic import GroupLoad, TopicTraffic, traffic_from_wire

VERSION = 1
_ZLIB_LEVEL = 1  # owner arrays compress ~2-4x at level 1; higher levels cost 5-10x the time for little more


# The state's classes are dataclasses for equality and repr, with an `__init__` of their own (in the compiled build,
# the one `dataclasses` generates is interpreted: about 0.5 µs more per object, and each event makes a group state
# and a state per strategy).


@dataclass
class MemberState:
    """An active member: what its latest join/subscribe said."""

    id: str
    topics: tuple[str, ...]
    rack: str | None
    instance_id: str | None
    weight: float  # `weighted-sticky`'s share (join events' `weight`)

    def __init__(self, id: str, topics: tuple[str, ...], rack: str | None = None, instance_id: str | None = None,
                 weight: float = 1.0) -> None:
        self.id = id
        self.topics = topics
        self.rack = rack
        self.instance_id = instance_id
        self.weight = weight


@dataclass
class StrategyState:
    """One strategy's view of the group after its last round."""

    generation: int  # rounds so far (the last round's generation; 0 = none yet)
    owner: np.ndarray  # int32 per partition (layout of GroupState): member index, -1 = nobody
    member_generation: np.ndarray  # int32 per member: generation of the last round it took part in, -1 = none

    def __init__(self, generation: int, owner: np.ndarray, member_generation: np.ndarray) -> None:
        self.generation = generation
        self.owner = owner
        self.member_generation = member_generation


@dataclass
class DepartedMember:
    """What a departed member would carry if it rejoined with the same id (KIP-341 generation conflicts)."""

    id: str
    generations: dict[str, int]  # strategy -> generation of its last round
    owned: dict[str, np.ndarray]  # strategy -> int64 keys `topic_index << 32 | partition`

    def __init__(self, id: str, generations: dict[str, int], owned: dict[str, np.ndarray]) -> None:
        self.id = id
        self.generations = generations
        self.owned = owned


@dataclass
class GroupState:
    """Everything a group's future rounds depend on.

    Partition layout: global id = start of its topic + partition, topics in `topics` order (the order the
    group first learnt their metadata), deleted topics with size 0 — the layout `assignors.GroupSpec` uses.
    """

    topics: list[str]
    sizes: np.ndarray  # int64 per topic, 0 = deleted
    rack_names: list[str]
    rack_bits: np.ndarray | None  # uint64 per partition (bit r: a replica on rack_names[r]); None = no racks
    members: list[MemberState]  # first-join order
    strategies: dict[str, StrategyState]
    departed: dict[str, DepartedMember]  # departure order, oldest first
    # the partitions `departed` holds over all its members and strategies, as `group_state` counted them after the
    # event that made this state (None: not counted; not encoded): the next event updates the count instead of
    # summing every departed member again
    departed_partitions: int | None = field(compare=False, repr=False)
    # topic -> its latest `traffic` event's rates (topics with metadata only; a deleted topic's are dropped)
    traffic: dict[str, TopicTraffic]
    # the load of the event that made this state (None: none; not encoded): the next event reuses it when the
    # traffic, the partition counts and the subscribed topics are the same (`traffic.group_load`)
    load: GroupLoad | None = field(compare=False, repr=False)
    # how long the capture saw the group's latest classic rebalance last (a `generation` event's `rebalance_ms`;
    # None: none seen), for `--timing rebalance_ms=observed` (docs/cost.md)
    rebalance_ms: int | None
    # topic -> its partition count at the group's last round, for the keyed-traffic topics of a captured history
    # that grew since without a round (the next round's `keys_moved` counts from there); empty otherwise
    grown: dict[str, int]

    def __init__(self, topics: list[str] | None = None, sizes: np.ndarray | None = None,
                 rack_names: list[str] | None = None, rack_bits: np.ndarray | None = None,
                 members: list[MemberState] | None = None, strategies: dict[str, StrategyState] | None = None,
                 departed: dict[str, DepartedMember] | None = None, departed_partitions: int | None = None,
                 traffic: dict[str, TopicTraffic] | None = None, load: GroupLoad | None = None,
                 rebalance_ms: int | None = None, grown: dict[str, int] | None = None) -> None:
        self.topics = [] if topics is None else topics
        self.sizes = np.zeros(0, dtype=np.int64) if sizes is None else sizes
        self.rack_names = [] if rack_names is None else rack_names
        self.rack_bits = rack_bits
        self.members = [] if members is None else members
        self.strategies = {} if strategies is None else strategies
        self.departed = {} if departed is None else departed
        self.departed_partitions = departed_partitions
        self.traffic = {} if traffic is None else traffic
        self.load = load
        self.rebalance_ms = rebalance_ms
        self.grown = {} if grown is None else grown

    @property
    def num_partitions(self) -> int:
        return int(self.sizes.sum())

    def starts(self) -> np.ndarray:
        """int64[T+1]: first global id of every topic."""
        out = np.zeros(len(self.topics) + 1, dtype=np.int64)
        np.cumsum(self.sizes, out=out[1:])
        return out


def _owner_wire(num_members: int) -> str:
    """Owner + 1 per partition in the narrowest dtype that holds every member index and 0 (nobody)."""
    return "|u1" if num_members < 255 else "<u2" if num_members < 65535 else "<i4"


def _rack_wire(num_racks: int) -> str:
    return "|u1" if num_racks <= 8 else "<u2" if num_racks <= 16 else "<u4" if num_racks <= 32 else "<u8"


# The header's array dtypes (little-endian, as numpy spells them), their numpy dtypes and `struct` codes, looked
# up instead of derived per array: a bench state's dozen tiny arrays cost more in such bookkeeping than in data.
_WIRE = {spec: (np.dtype(spec), code)
         for spec, code in (("|u1", "B"), ("<u2", "H"), ("<u4", "I"), ("<u8", "Q"), ("<i4", "i"), ("<i8", "q"))}
_HEADER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)  # the format's header (a weighted one)
# owner <-> owner + 1 with a 0-d int32 operand, not the literal 1: numpy converts a Python int operand on every
# call, which costs more than the arithmetic on a bench state's few dozen partitions
_ONE = np.array(1, np.int32)


class _Writer:
    """The payload's arrays and their header specs `[dtype, count]`, in write order."""

    def __init__(self) -> None:
        self.specs: list[list] = []
        self.chunks: list[bytes] = []

    def add(self, array: np.ndarray, wire: str) -> None:
        self.specs.append([wire, array.size])
        self.chunks.append(array.astype(_WIRE[wire][0], copy=False).tobytes())

    def add_ints(self, values: list[int], wire: str) -> None:
        """Python ints straight to bytes: the per-member and per-subscription lists are built in Python."""
        self.specs.append([wire, len(values)])
        self.chunks.append(struct.pack(f"<{len(values)}{_WIRE[wire][1]}", *values))


class _Reader:
    """The payload's arrays in write order, read in place (the caller's cast makes the copy it keeps)."""

    def __init__(self, specs: list[list], payload: bytes, pos: int) -> None:
        spans = []
        for wire, count in specs:
            if wire not in _WIRE:
                raise ValueError(f"state blob: unknown array dtype {wire!r}")
            dtype, code = _WIRE[wire]
            spans.append((dtype, code, count, pos))
            pos += dtype.itemsize * count
        if pos > len(payload):
            raise ValueError("state blob: truncated array data")
        self.spans = iter(spans)
        self.payload = payload

    def view(self) -> np.ndarray:
        """The next array, read-only over the payload."""
        dtype, _, count, pos = next(self.spans)
        return np.frombuffer(self.payload, dtype, count, pos)

    def ints(self) -> tuple[int, ...]:
        """The next array as Python ints, for the lists rebuilt in Python."""
        _, code, count, pos = next(self.spans)
        return struct.unpack_from(f"<{count}{code}", self.payload, pos)


def encode(state: GroupState) -> bytes:
    """The versioned blob of `state` (deterministic: equal states give equal bytes)."""
    names = {t: i for i, t in enumerate(state.topics)}
    subscriptions: dict[tuple[str, ...], int] = {}  # distinct subscriptions, stored once
    by_identity: dict[int, int] = {}  # members share subscription tuples: hash each object once
    member_subscription = []
    for m in state.members:
        s = by_identity.get(id(m.topics))
        if s is None:
            s = by_identity[id(m.topics)] = subscriptions.setdefault(m.topics, len(subscriptions))
        member_subscription.append(s)
    for topics in subscriptions:
        for t in topics:
            names.setdefault(t, len(names))
    w = _Writer()
    w.add(state.sizes, "<i8")
    w.add_ints(list(accumulate((len(topics) for topics in subscriptions), initial=0)), "<i8")
    w.add_ints([names[t] for topics in subscriptions for t in topics], "<i4")
    w.add_ints(member_subscription, "<i4")
    if state.rack_bits is not None:
        w.add(state.rack_bits, _rack_wire(len(state.rack_names)))
    else:
        w.add_ints([], "|u1")
    owner_wire = _owner_wire(len(state.members))
    for st in state.strategies.values():
        w.add(st.owner + _ONE, owner_wire)
        w.add(st.member_generation, "<i4")
    for d in state.departed.values():
        for keys in d.owned.values():
            w.add(keys, "<i8")
    header: dict[str, object] = {
        "topics": state.topics,
        "names": list(names)[len(state.topics):],
        "racks": state.rack_names if state.rack_bits is not None else None,
        # a weight other than 1 is a fourth entry: blobs without weights keep their bytes
        "members": [[m.id, m.rack, m.instance_id] if m.weight == 1 else [m.id, m.rack, m.instance_id, m.weight]
                    for m in state.members],
        "strategies": [[name, s.generation] for name, s in state.strategies.items()],
        "departed": [[d.id, [[k, d.generations[k]] for k in d.owned]] for d in state.departed.values()],
        "arrays": w.specs,
    }
    if state.traffic:  # a later key: blobs of groups without traffic keep their bytes, older blobs decode as before
        header["traffic"] = [[topic, *t.wire()] for topic, t in state.traffic.items()]
    if state.rebalance_ms is not None:  # a later key: other blobs keep their bytes, older blobs decode as before
        header["rebalance_ms"] = state.rebalance_ms
    if state.grown:  # a later key, as above
        header["grown"] = state.grown
    # orjson writes the bytes `_HEADER` writes for strings, ints, None and lists (tests/core/test_state_codec.py)
    # at a fraction of the cost; a float (a weight, a rate) it may spell otherwise ("1e-5" for "1e-05"), so floats keep
    # json (both spell a double so that it reads back as the same double)
    floats = bool(state.traffic) or any(m.weight != 1 for m in state.members)
    head = _HEADER.encode(header).encode("utf-8") if floats else orjson.dumps(header)
    payload = b"".join([struct.pack("<I", len(head)), head, *w.chunks])
    return bytes([VERSION]) + zlib.compress(payload, _ZLIB_LEVEL)


def decode(blob: bytes) -> GroupState:
    """Inverse of `encode`; ValueError for a blob of an unknown version or a damaged one."""
    if not blob:
        raise ValueError("state blob: empty")
    if blob[0] != VERSION:
        raise ValueError(f"state blob: unsupported version {blob[0]} (this build reads version {VERSION})")
    try:
        payload = zlib.decompress(memoryview(blob)[1:])
    except zlib.error as exc:
        raise ValueError(f"state blob: {exc}") from None
    (head_len,) = struct.unpack_from("<I", payload)
    header = json.loads(payload[4:4 + head_len].decode("utf-8"))
    r = _Reader(header["arrays"], payload, 4 + head_len)
    names = header["topics"] + header["names"]
    sizes = r.view().astype(np.int64)
    offsets = r.ints()
    topic_ids = r.ints()
    # one tuple object per distinct subscription, shared by its members (group_state caches by identity)
    subscriptions = [tuple([names[i] for i in topic_ids[a:b]]) for a, b in pairwise(offsets)]
    members = [MemberState(m[0], subscriptions[s], *m[1:]) for s, m in zip(r.ints(), header["members"], strict=True)]
    rack_bits = r.view()
    strategies: dict[str, StrategyState] = {}
    for name, generation in header["strategies"]:
        owner = r.view().astype(np.int32)
        owner -= _ONE
        strategies[name] = StrategyState(generation, owner, r.view().astype(np.int32))
    departed: dict[str, DepartedMember] = {}
    for mid, per_strategy in header["departed"]:
        departed[mid] = DepartedMember(mid, dict(per_strategy),
                                       {k: r.view().astype(np.int64) for k, _ in per_strategy})
    return GroupState(
        topics=header["topics"],
        sizes=sizes,
        rack_names=header["racks"] or [],
        rack_bits=rack_bits.astype(np.uint64) if header["racks"] is not None else None,
        members=members,
        strategies=strategies,
        departed=departed,
        traffic={entry[0]: traffic_from_wire(entry[1:]) for entry in header.get("traffic", ())},
        rebalance_ms=header.get("rebalance_ms"),
        grown=dict(header.get("grown", {})),
    )

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
from itertools import pairwise

import numpy as np

VERSION = 1
_ZLIB_LEVEL = 1  # owner arrays compress ~2-4x at level 1; higher levels cost 5-10x the time for little more


@dataclass
class MemberState:
    """An active member: what its latest join/subscribe said."""

    id: str
    topics: tuple[str, ...]
    rack: str | None = None
    instance_id: str | None = None
    weight: float = 1.0  # `weighted-sticky`'s share (join events' `weight`)


@dataclass
class StrategyState:
    """One strategy's view of the group after its last round."""

    generation: int  # rounds so far (the last round's generation; 0 = none yet)
    owner: np.ndarray  # int32 per partition (layout of GroupState): member index, -1 = nobody
    member_generation: np.ndarray  # int32 per member: generation of the last round it took part in, -1 = none


@dataclass
class DepartedMember:
    """What a departed member would carry if it rejoined with the same id (KIP-341 generation conflicts)."""

    id: str
    generations: dict[str, int]  # strategy -> generation of its last round
    owned: dict[str, np.ndarray]  # strategy -> int64 keys `topic_index << 32 | partition`


@dataclass
class GroupState:
    """Everything a group's future rounds depend on.

    Partition layout: global id = start of its topic + partition, topics in `topics` order (the order the
    group first learnt their metadata), deleted topics with size 0 — the layout `assignors.GroupSpec` uses.
    """

    topics: list[str] = field(default_factory=list)
    sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # 0 = deleted
    rack_names: list[str] = field(default_factory=list)
    rack_bits: np.ndarray | None = None  # uint64 per partition (bit r: a replica on rack_names[r]); None = no racks
    members: list[MemberState] = field(default_factory=list)  # first-join order
    strategies: dict[str, StrategyState] = field(default_factory=dict)
    departed: dict[str, DepartedMember] = field(default_factory=dict)  # departure order, oldest first

    @property
    def num_partitions(self) -> int:
        return int(self.sizes.sum())

    def starts(self) -> np.ndarray:
        """int64[T+1]: first global id of every topic."""
        out = np.zeros(len(self.topics) + 1, dtype=np.int64)
        np.cumsum(self.sizes, out=out[1:])
        return out


def _owner_dtype(num_members: int) -> np.dtype:
    for dtype in (np.uint8, np.uint16):
        if num_members < np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int32)


class _Writer:
    def __init__(self) -> None:
        self.specs: list[list] = []
        self.chunks: list[bytes] = []

    def add(self, array: np.ndarray) -> None:
        array = np.ascontiguousarray(array)
        self.specs.append([array.dtype.newbyteorder("<").str, int(array.size)])
        self.chunks.append(array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())


class _Reader:
    def __init__(self, specs: list[list], body: memoryview) -> None:
        self.specs = iter(specs)
        self.body = body
        self.pos = 0

    def take(self) -> np.ndarray:
        dtype_str, count = next(self.specs)
        dtype = np.dtype(dtype_str)
        end = self.pos + dtype.itemsize * count
        if end > len(self.body):
            raise ValueError("state blob: truncated array data")
        array = np.frombuffer(self.body[self.pos:end], dtype=dtype).astype(dtype.newbyteorder("="))
        self.pos = end
        return array


def encode(state: GroupState) -> bytes:
    """The versioned blob of `state` (deterministic: equal states give equal bytes)."""
    names = {t: i for i, t in enumerate(state.topics)}
    subscriptions: dict[tuple[str, ...], int] = {}  # distinct subscriptions, stored once
    by_identity: dict[int, int] = {}  # members share subscription tuples: hash each object once
    member_subscription = np.zeros(len(state.members), dtype=np.int32)
    for k, m in enumerate(state.members):
        s = by_identity.get(id(m.topics))
        if s is None:
            s = by_identity[id(m.topics)] = subscriptions.setdefault(m.topics, len(subscriptions))
        member_subscription[k] = s
    for topics in subscriptions:
        for t in topics:
            names.setdefault(t, len(names))
    w = _Writer()
    w.add(state.sizes.astype(np.int64))
    offsets = np.zeros(len(subscriptions) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(topics) for topics in subscriptions])
    w.add(offsets)
    w.add(np.array([names[t] for topics in subscriptions for t in topics], dtype=np.int32))
    w.add(member_subscription)
    rack_dtype = next(d for d in (np.uint8, np.uint16, np.uint32, np.uint64)
                      if len(state.rack_names) <= 8 * np.dtype(d).itemsize)
    w.add(state.rack_bits.astype(rack_dtype) if state.rack_bits is not None else np.zeros(0, dtype=np.uint8))
    owner_dtype = _owner_dtype(len(state.members))
    for s in state.strategies.values():
        w.add((s.owner.astype(np.int64) + 1).astype(owner_dtype))
        w.add(s.member_generation.astype(np.int32))
    for d in state.departed.values():
        for strategy in d.owned:
            w.add(d.owned[strategy].astype(np.int64))
    header = {
        "topics": state.topics,
        "names": list(names)[len(state.topics):],
        "racks": state.rack_names if state.rack_bits is not None else None,
        # a weight other than 1 is a fourth entry: blobs without weights keep their bytes
        "members": [[m.id, m.rack, m.instance_id, *([m.weight] if m.weight != 1 else [])] for m in state.members],
        "strategies": [[name, s.generation] for name, s in state.strategies.items()],
        "departed": [[d.id, [[k, d.generations[k]] for k in d.owned]] for d in state.departed.values()],
        "arrays": w.specs,
    }
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
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
    r = _Reader(header["arrays"], memoryview(payload)[4 + head_len:])
    names = header["topics"] + header["names"]
    sizes = r.take()
    offsets = r.take()
    topic_ids = r.take().tolist()
    # one tuple object per distinct subscription, shared by its members (group_state caches by identity)
    subscriptions = [tuple(names[i] for i in topic_ids[a:b]) for a, b in pairwise(offsets.tolist())]
    member_subscription = r.take().tolist()
    members = [MemberState(mid, subscriptions[member_subscription[k]], rack, instance_id, *weight)
               for k, (mid, rack, instance_id, *weight) in enumerate(header["members"])]
    rack_bits = r.take()
    strategies: dict[str, StrategyState] = {}
    for name, generation in header["strategies"]:
        owner = r.take().astype(np.int32) - 1
        strategies[name] = StrategyState(generation, owner, r.take().astype(np.int32))
    departed: dict[str, DepartedMember] = {}
    for mid, per_strategy in header["departed"]:
        departed[mid] = DepartedMember(mid, {k: g for k, g in per_strategy}, {k: r.take() for k, _ in per_strategy})
    return GroupState(
        topics=header["topics"],
        sizes=sizes.astype(np.int64),
        rack_names=header["racks"] or [],
        rack_bits=rack_bits.astype(np.uint64) if header["racks"] is not None else None,
        members=members,
        strategies=strategies,
        departed=departed,
    )

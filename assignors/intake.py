"""The cheap path into a `GroupSpec` for `assign()`: a small group's plain input, read straight into the form the
streaming state machine hands the assignors (claims as `owned_lists`, generations as a list, the topic tables of one
spec per topic layout shared by every call on that layout).

Plain input is a part of the valid input, checked here in one pass: topics a dict of ASCII names -> 1 .. 2^31 - 1
partitions, at most `SMALL_GROUP` in all; members a dict of ASCII ids -> `Member`s (that class exactly) with weight
1, a list or tuple of strings as `topics` (ASCII, or a topic's name), an int32 `generation`, None or an ASCII string
as `rack` and `instance_id`, and as `owned` a list or tuple of `(str, int)` tuples, each a partition in the metadata or
one of an ASCII topic without metadata (left out, as Kafka does). ASCII strings are valid Kafka strings (no unpaired
surrogate). For plain input `plain_spec` gives the spec `build_spec` (assignors.model) would; for anything else None,
and the caller validates the long way, whose errors name the field. `partition_racks` take that way's conversion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assignors.model import INT32_MAX, SMALL_GROUP, Member, attach_partition_racks
from assignors.pairs import CACHE
from assignors.spec import GroupSpec

_LAYOUTS_KEPT = 256  # topic layouts whose `_Layout` is kept (all dropped when full: a caller meets a few)
_SUBSCRIPTIONS_KEPT = 1024  # per layout, distinct subscriptions kept


class _Layout:
    """What plain calls on one topic layout share: a member-less spec (its topic tables are derived once, then
    shared by every spec copied from it), each topic's index, size and first global id, and the subscriptions met."""

    def __init__(self, names: list[str], sizes: list[int]) -> None:
        self.spec = GroupSpec(names, np.array(sizes, dtype=np.int64), [], [], [], [], [], [], [])
        self.index: dict[str, int] = {name: i for i, name in enumerate(names)}
        self.sizes = sizes
        self.starts: list[int] = self.spec.topic_start.tolist()
        self.num_partitions: int = self.starts[-1]
        self.key = self.spec.pair_key
        # subscription as given -> (names without repeats, topic indices with metadata: shared read-only int32)
        self.subscriptions: dict[tuple, tuple[tuple[str, ...], np.ndarray]] = {}

    def subscription(self, given: tuple) -> tuple[tuple[str, ...], np.ndarray] | None:
        """A subscription's names without repeats and its topic indices; None unless plain."""
        index = self.index
        for name in given:
            if type(name) is not str or (name not in index and not name.isascii()):
                return None
        names: tuple[str, ...] = tuple(dict.fromkeys(given))
        topics = np.array([index[t] for t in names if t in index], dtype=np.int32)
        topics.flags.writeable = False  # shared by every member with this subscription
        if len(self.subscriptions) >= _SUBSCRIPTIONS_KEPT:
            self.subscriptions.clear()
        self.subscriptions[given] = (names, topics)
        return names, topics


_LAYOUTS: dict[tuple[tuple[str, ...], tuple[int, ...]], _Layout] = {}
_OWN_CLAIMS = "the call's own"  # `plain_spec`'s name for a spec's claims


def _layout(topics: object) -> _Layout | None:
    """The `_Layout` of plain `topics`; None unless plain."""
    if type(topics) is not dict:
        return None
    given: dict[Any, Any] = topics  # type: ignore[assignment]
    names: list[str] = []
    sizes: list[int] = []
    total = 0
    for name, count in given.items():
        if type(name) is not str or not name.isascii() or type(count) is not int:
            return None
        size: int = count
        if size < 1 or size > INT32_MAX:
            return None
        total += size
        if total > SMALL_GROUP:
            return None
        names.append(name)
        sizes.append(size)
    key = (tuple(names), tuple(sizes))
    layout = _LAYOUTS.get(key)
    if layout is None:
        if len(_LAYOUTS) >= _LAYOUTS_KEPT:
            _LAYOUTS.clear()
        layout = _LAYOUTS[key] = _Layout(names, sizes)
    return layout


def _plain_string(value: object) -> bool:
    return value is None or (type(value) is str and value.isascii())  # type: ignore[union-attr]


def plain_spec(
    topics: Mapping[str, int],
    members: Mapping[str, Member],
    partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> GroupSpec | None:
    """The `GroupSpec` of a plain call (module docstring), None for any other input."""
    layout = _layout(topics)
    if layout is None or type(members) is not dict:
        return None
    given: dict[Any, Any] = members  # type: ignore[assignment]
    index, sizes, starts = layout.index, layout.sizes, layout.starts
    member_ids: list[str] = []
    subscriptions: list[tuple[str, ...]] = []
    member_topics: list[np.ndarray] = []
    owned: list[list[int]] = []
    generations: list[int] = []
    racks: list[str | None] = []
    instance_ids: list[str | None] = []
    # validated caller tuples seed the pair cache as `build_spec`'s do (`assignors.pairs`), unless every
    # partition of the layout has its tuple already
    seeding = not layout.spec.pair_tuples_known()
    seeds: list[tuple[np.ndarray, np.ndarray]] = []
    claimant: list[int] = [-1] * layout.num_partitions  # the last member seen claiming each partition
    disjoint = True
    for mid, m in given.items():
        if type(mid) is not str or not mid.isascii() or type(m) is not Member:
            return None
        member: Any = m
        subscribed = member.topics
        if type(subscribed) is not list and type(subscribed) is not tuple:
            return None
        try:
            known = layout.subscriptions.get(tuple(subscribed))
        except TypeError:  # an unhashable name: not plain
            return None
        if known is None:
            known = layout.subscription(tuple(subscribed))
            if known is None:
                return None
        generation = member.generation
        rack = member.rack
        instance_id = member.instance_id
        weight = member.weight
        if (type(generation) is not int or not -INT32_MAX - 1 <= generation <= INT32_MAX or not _plain_string(rack)
                or not _plain_string(instance_id) or type(weight) is not int or weight != 1):
            return None
        pairs = member.owned
        if type(pairs) is not list and type(pairs) is not tuple:
            return None
        me = len(member_ids)
        ids: list[int] = []
        repeats = False
        for pair in pairs:
            if type(pair) is not tuple or len(pair) != 2:
                return None
            name, number = pair
            if type(name) is not str or type(number) is not int:
                return None
            t = index.get(name, -1)
            if t < 0:
                if not name.isascii():
                    return None
                continue  # a topic without metadata
            p: int = number
            if p < 0 or p >= sizes[t]:
                return None  # bad, or past the topic's partitions: Kafka's sticky engine may throw on it
            at = starts[t] + p
            last = claimant[at]
            if last == me:
                repeats = True
            elif last >= 0:
                disjoint = False
            claimant[at] = me
            ids.append(at)
        if seeding and ids:
            seeds.append((np.array(ids, dtype=np.int64), _objects([pair for pair in pairs if pair[0] in index])))
        if repeats:
            ids = list(dict.fromkeys(ids))  # first occurrences
        member_ids.append(mid)
        subscriptions.append(known[0])
        member_topics.append(known[1])
        owned.append(ids)
        generations.append(generation)
        racks.append(rack or None)
        instance_ids.append(instance_id)
    if seeds:
        CACHE.seed(layout.key, seeds)
    spec = layout.spec.with_members(member_ids, subscriptions, member_topics, None, generations, racks, instance_ids,
                                    None, [], None, owned, disjoint)
    # the spec's member tables are its own, so its claims are the only ones they meet: one name names them
    # (`GroupSpec.claims_key`), and the sticky engine keys its result by that instead of by the claims' bytes
    spec.claims_key = _OWN_CLAIMS
    if partition_racks is not None:
        attach_partition_racks(spec, partition_racks)
    return spec


def _objects(pairs: list[Any]) -> np.ndarray:
    """A 1-d object array of these tuples (not unpacked into a 2-d array)."""
    out = np.empty(len(pairs), dtype=object)
    out[:] = pairs
    return out

"""The per-group state machine: (state blob, events) -> (new state blob, diff records, dead letters).

A pure function over plain data, so the Spark adapter, the local loop and the tests share it. Semantics
are those of contract §2/§3 (documented for users in the README's event reference):

* events apply in source order (`SourceRecord.order`); an invalid event becomes a dead letter and
  changes nothing;
* each event that changes membership, subscriptions, or the metadata of a subscribed topic triggers one
  rebalance per configured strategy, called with members in first-join order, topics in the order the
  group first learnt their metadata, and every member's owned partitions/generation from the last round
  it took part in (departed members are remembered, bounded, so a returning member id carries them);
* a static member replaced by a new member id (same `instance_id`) hands over its place, assignments
  and generations without a rebalance; a `replace` record tells diff readers about the new id;
* cooperative-sticky rounds that withhold partitions are followed at once by follow-up rounds.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assignors import GroupSpec, assign_spec
from assignors.javaorder import java_string_key
from streaming.config import Limits, PipelineConfig
from streaming.diffs import build_metrics, dead_letter_record, diff_records, member_changes
from streaming.events import (
    DeleteTopic,
    Event,
    InvalidEvent,
    Join,
    Leave,
    Metadata,
    Partitions,
    Subscribe,
    parse_event,
)
from streaming.state_codec import DepartedMember, GroupState, MemberState, StrategyState, decode, encode

log = logging.getLogger(__name__)

COOPERATIVE = frozenset({"cooperative-sticky"})  # revoke round + follow-ups; pauses only what it revokes
INCREMENTAL = frozenset({"uniform", "server-range"})  # KIP-848: one round; the coordinator revokes only movers


@dataclass(frozen=True)
class SourceRecord:
    """One input record, with where it came from."""

    value: bytes | None
    key: bytes | None
    source: dict  # {"topic", "partition", "offset"} for Kafka, {"file", "line"} (1-based) for JSONL logs
    order: tuple[int, int]  # (kafka partition, offset) or (file index, line)
    timestamp_ms: int | None  # Kafka record timestamp (None for files)


@dataclass(frozen=True)
class OutputRecord:
    """One output record for the diffs sink or the dead-letter sink."""

    kind: str  # "diff" or "dead-letter"
    key: str  # group id ("" if unknown)
    value: bytes  # UTF-8 JSON
    order: tuple[int, int, int]  # (source order..., seq within that source record)


def step(
    group: str, state: bytes | None, records: Sequence[SourceRecord], config: PipelineConfig, now_ms: int
) -> tuple[bytes | None, list[OutputRecord]]:
    """Apply one group's records (sorted here by `.order`) to its state blob.

    Returns the new blob (None: the group has no state) and the output records in order. `group == ""`
    is the dead-letter lane: every record becomes a dead letter and nothing is stored.
    """
    current, dirty, out = step_state(group, decode(state) if state is not None else None, records, config, now_ms)
    if current is None:
        return None, out
    return (encode(current) if dirty else state), out


def step_state(
    group: str, current: GroupState | None, records: Sequence[SourceRecord], config: PipelineConfig, now_ms: int
) -> tuple[GroupState | None, bool, list[OutputRecord]]:
    """`step` over a decoded state, for callers that keep states in memory between calls (the local loop
    encodes each group once at the end instead of once per batch). Returns (state, whether it differs from
    the one passed in, output records); `current` itself is never modified beyond strategy alignment."""
    ordered = sorted(records, key=lambda r: r.order)
    limits = config.limits
    out: list[OutputRecord] = []
    dirty = current is not None and _align_strategies(current, config.strategies)
    for rec in ordered:
        emit = _Emitter(group, rec, now_ms, limits, out)
        try:
            event = parse_event(rec.value, limits)
            if not group:
                raise InvalidEvent("record was routed without a group id", event.group)
            if event.group != group:
                raise InvalidEvent(f"event group {event.group!r} differs from the record's group {group!r}",
                                   event.group)
            base = current if current is not None else _empty_state(config.strategies)
            changed = _Transition(base, config).apply(event, emit)
        except InvalidEvent as exc:
            emit.discard()
            emit.dead_letter(exc.reason, exc.group)
            continue
        except Exception as exc:  # a bug must not stop the stream nor corrupt the state: the event is parked
            log.exception("internal error on %s", rec.source)
            emit.discard()
            emit.dead_letter(f"internal error: {type(exc).__name__}: {exc}", group or None)
            continue
        if changed is not None:
            current, dirty = changed, True
    if current is None or not group:
        return None, dirty, out
    return current, dirty, out


def _empty_state(strategies: Sequence[str]) -> GroupState:
    state = GroupState()
    _align_strategies(state, strategies)
    return state


def _align_strategies(state: GroupState, strategies: Sequence[str]) -> bool:
    """Keep exactly the configured strategies (a strategy added later starts with no assignment)."""
    if list(state.strategies) == list(strategies):
        return False
    old = state.strategies
    state.strategies = {
        name: old.get(name)
        or StrategyState(0, np.full(state.num_partitions, -1, np.int32), np.full(len(state.members), -1, np.int32))
        for name in strategies
    }
    for d in state.departed.values():
        d.owned = {name: keys for name, keys in d.owned.items() if name in state.strategies}
        d.generations = {name: g for name, g in d.generations.items() if name in state.strategies}
    return True


class _Emitter:
    """Collects one source record's outputs with their sequence numbers."""

    def __init__(self, group: str, rec: SourceRecord, now_ms: int, limits: Limits, out: list[OutputRecord]):
        self.group, self.rec, self.now_ms, self.limits, self.out = group, rec, now_ms, limits, out
        self.start = len(out)

    def _add(self, kind: str, value: bytes) -> None:
        seq = len(self.out) - self.start
        self.out.append(OutputRecord(kind, self.group, value, (*self.rec.order, seq)))

    def discard(self) -> None:
        del self.out[self.start:]

    def dead_letter(self, reason: str, group: str | None) -> None:
        self._add("dead-letter", dead_letter_record(
            group=group, reason=reason, source=self.rec.source, original=self.rec.value,
            event_ts=self.rec.timestamp_ms, emitted_ts=self.now_ms, max_bytes=self.limits.max_record_bytes,
        ))

    def diff(self, head: dict[str, Any], changes: dict, metrics: dict[str, Any], event_ts: int | None) -> None:
        tail = {**metrics, "event_ts": event_ts, "emitted_ts": self.now_ms}
        for value in diff_records(head, changes, tail, self.limits.max_record_bytes):
            self._add("diff", value)


def _layout_map(old_sizes: np.ndarray, new_sizes: np.ndarray) -> np.ndarray:
    """Old global id -> new global id (-1: the partition is gone); topics may only be appended."""
    if old_sizes.size == new_sizes.size and np.array_equal(old_sizes, new_sizes):  # most events keep the layout
        return np.arange(int(new_sizes.sum()), dtype=np.int64)
    old = np.zeros(new_sizes.size, dtype=np.int64)
    old[: old_sizes.size] = old_sizes
    old_starts = np.concatenate([[0], np.cumsum(old)])
    new_starts = np.concatenate([[0], np.cumsum(new_sizes)])
    topic = np.repeat(np.arange(old.size), old)
    number = np.arange(topic.size, dtype=np.int64) - old_starts[topic]
    return np.where(number < new_sizes[topic], new_starts[topic] + number, -1)


def _move(values: np.ndarray, mapping: np.ndarray, size: int, fill: int) -> np.ndarray:
    """Re-lay a per-partition array through a `_layout_map`."""
    out = np.full(size, fill, dtype=values.dtype)
    keep = mapping >= 0
    out[mapping[keep]] = values[keep]
    return out


def _translate(owner: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Member indices through `table` (old index -> new index), keeping -1."""
    out = np.full(owner.size, -1, dtype=np.int32)
    held = owner >= 0
    out[held] = table[owner[held]]
    return out


def _owner_of(assignment: Sequence[np.ndarray], num_partitions: int) -> np.ndarray:
    owner = np.full(num_partitions, -1, dtype=np.int32)
    if assignment:
        sizes = [a.size for a in assignment]
        owner[np.concatenate(assignment).astype(np.int64)] = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    return owner


@dataclass
class _Round:
    head: dict[str, Any]
    changes: dict
    metrics: dict[str, Any]


class _Transition:
    """One event applied to one state, without touching it: `apply` returns a new state (or None)."""

    def __init__(self, old: GroupState, config: PipelineConfig) -> None:
        self.old = old
        self.config = config
        self.limits = config.limits
        self.topics = list(old.topics)
        self.sizes = old.sizes.tolist()
        self.topic_index = {t: i for i, t in enumerate(self.topics)}
        self.rack_names = list(old.rack_names)
        self.rack_updates: dict[int, list[list[str]]] = {}
        self.members = list(old.members)
        self.carry: list[int | str | None] = list(range(len(old.members)))  # old index / departed id / new
        self.replaced: tuple[int, str] | None = None  # (index, old member id) of a static replacement
        self.membership_changed = False
        self.metadata_changed: set[int] = set()

    # -- validation and the new shape of the group -------------------------------------------------------
    def _metadata(self, md: Metadata, group: str) -> None:
        for topic, count in md.partitions.items():
            i = self.topic_index.get(topic)
            if i is None:
                if len(self.topics) >= self.limits.max_topics_per_group:
                    raise InvalidEvent(f"group already knows {len(self.topics)} topics, the limit "
                                       f"(max_topics_per_group)", group)
                self.topic_index[topic] = len(self.topics)
                self.topics.append(topic)
                self.sizes.append(0)
                i = len(self.topics) - 1
            if count < self.sizes[i]:
                raise InvalidEvent(f"field 'partitions.{topic}': topic cannot shrink from {self.sizes[i]} to "
                                   f"{count} partitions", group)
            if count != self.sizes[i]:
                self.sizes[i] = count
                self.metadata_changed.add(i)
        total = sum(self.sizes)
        if total > self.limits.max_partitions_per_group:
            raise InvalidEvent(f"group would have {total} partitions, above the limit of "
                               f"{self.limits.max_partitions_per_group}", group)
        known = set(self.rack_names)
        for topic, rows in md.partition_racks.items():
            i = self.topic_index.get(topic)
            if i is None or self.sizes[i] == 0:
                raise InvalidEvent(f"field 'partition_racks.{topic}': topic has no partition count", group)
            if len(rows) > self.sizes[i]:
                raise InvalidEvent(f"field 'partition_racks.{topic}': {len(rows)} entries for "
                                   f"{self.sizes[i]} partitions", group)
            for row in rows:
                for rack in row:
                    if rack not in known:
                        if len(self.rack_names) >= self.limits.max_racks_per_group:
                            raise InvalidEvent(f"field 'partition_racks.{topic}': more than "
                                               f"{self.limits.max_racks_per_group} distinct racks in the group", group)
                        known.add(rack)
                        self.rack_names.append(rack)
            self.rack_updates[i] = rows

    def _member_index(self) -> dict[str, int]:
        return {m.id: i for i, m in enumerate(self.members)}

    def _join(self, ev: Join) -> None:
        index = self._member_index()
        me = index.get(ev.member)
        holder = None
        if ev.instance_id is not None:
            holder = next((i for i, m in enumerate(self.members) if m.instance_id == ev.instance_id), None)
        if holder is not None and holder != me:
            if me is not None:
                raise InvalidEvent(f"instance_id {ev.instance_id!r} is held by member {self.members[holder].id!r} "
                                   f"while member {ev.member!r} is in the group", ev.group)
            old = self.members[holder]
            self.members[holder] = MemberState(ev.member, old.topics, old.rack, old.instance_id)
            self.replaced = (holder, old.id)
            me = holder
        # members usually share subscriptions: keep one tuple object per distinct list (cheap caching by id)
        topics = next((m.topics for m in self.members if m.topics == ev.topics), ev.topics)
        if me is None:
            if len(self.members) >= self.limits.max_members_per_group:
                raise InvalidEvent(f"group already has {len(self.members)} members, the limit "
                                   f"(max_members_per_group)", ev.group)
            self.members.append(MemberState(ev.member, topics, ev.rack, ev.instance_id))
            self.carry.append(ev.member if ev.member in self.old.departed else None)
            self.membership_changed = True
            return
        cur = self.members[me]
        if cur.instance_id != ev.instance_id:
            raise InvalidEvent(f"member {ev.member!r} is in the group with instance_id {cur.instance_id!r}; "
                               f"a rejoin cannot change it to {ev.instance_id!r}", ev.group)
        if cur.topics != topics or cur.rack != ev.rack:
            self.members[me] = MemberState(cur.id, topics, ev.rack, cur.instance_id)
            self.membership_changed = True

    def _known(self, member: str, what: str, group: str) -> int:
        i = self._member_index().get(member)
        if i is None:
            raise InvalidEvent(f"{what} of unknown member {member!r}", group)
        return i

    def _event(self, ev: Event) -> None:
        if isinstance(ev, Join):
            if ev.metadata is not None:
                self._metadata(ev.metadata, ev.group)
            self._join(ev)
        elif isinstance(ev, Leave):
            i = self._known(ev.member, "leave", ev.group)
            del self.members[i], self.carry[i]
            self.membership_changed = True
        elif isinstance(ev, Subscribe):
            i = self._known(ev.member, "subscribe", ev.group)
            cur = self.members[i]
            if cur.topics != ev.topics:
                self.members[i] = MemberState(cur.id, ev.topics, cur.rack, cur.instance_id)
                self.membership_changed = True
        elif isinstance(ev, Partitions):
            self._metadata(ev.metadata, ev.group)
        elif isinstance(ev, DeleteTopic):
            i = self.topic_index.get(ev.topic)
            if i is None or self.sizes[i] == 0:
                raise InvalidEvent(f"delete_topic of unknown topic {ev.topic!r}", ev.group)
            self.sizes[i] = 0
            self.metadata_changed.add(i)

    def _new_rack_bits(self, new_sizes: np.ndarray, old_to_new: np.ndarray) -> np.ndarray | None:
        if not self.rack_names:
            return None
        total = int(new_sizes.sum())
        if self.old.rack_bits is not None:
            bits = _move(self.old.rack_bits, old_to_new, total, 0)
        else:
            bits = np.zeros(total, dtype=np.uint64)
        starts = np.concatenate([[0], np.cumsum(new_sizes)])
        rack_bit = {r: 1 << i for i, r in enumerate(self.rack_names)}
        for t, rows in self.rack_updates.items():
            block = np.zeros(int(new_sizes[t]), dtype=np.uint64)
            for p, row in enumerate(rows):
                mask = 0
                for rack in row:
                    mask |= rack_bit[rack]
                block[p] = mask
            before = bits[starts[t]:starts[t + 1]]
            if not np.array_equal(before, block):
                self.metadata_changed.add(t)
            bits[starts[t]:starts[t + 1]] = block
        return bits

    def _subscribed_metadata_changed(self) -> bool:
        if not self.metadata_changed:
            return False
        changed = {self.topics[t] for t in self.metadata_changed}
        return any(not changed.isdisjoint(topics) for topics in {id(m.topics): m.topics for m in self.members}.values())

    # -- applying it ---------------------------------------------------------------------------------------
    def apply(self, ev: Event, emit: _Emitter) -> GroupState | None:
        """Validate `ev` against the state, emit its records, return the new state (None: no change)."""
        self._event(ev)
        old = self.old
        new_sizes = np.array(self.sizes, dtype=np.int64)
        old_to_new = _layout_map(old.sizes, new_sizes)
        rack_bits = self._new_rack_bits(new_sizes, old_to_new)
        rebalance = self.membership_changed or self._subscribed_metadata_changed()
        if not (rebalance or self.replaced or self.metadata_changed or len(self.topics) != len(old.topics)):
            return None
        ctx = _RoundContext(self, new_sizes, old_to_new, rack_bits, ev, emit)
        new_strategies = {name: ctx.run(name, old.strategies[name], rebalance) for name in self.config.strategies}
        departed = dict(old.departed)
        for mid in [c for c in self.carry if isinstance(c, str)]:
            departed.pop(mid, None)
        if self.replaced is not None:
            departed.pop(self.members[self.replaced[0]].id, None)
        for j in ctx.leavers:
            departed.pop(old.members[j].id, None)
            departed[old.members[j].id] = ctx.departed_record(j)
        _bound_departed(departed, self.limits)
        return GroupState(
            topics=self.topics,
            sizes=new_sizes,
            rack_names=self.rack_names if rack_bits is not None else [],
            rack_bits=rack_bits,
            members=self.members,
            strategies=new_strategies,
            departed=departed,
        )


def _bound_departed(departed: dict[str, DepartedMember], limits: Limits) -> None:
    """Forget the oldest departed members beyond the limits (they would then rejoin as new members)."""
    total = sum(a.size for d in departed.values() for a in d.owned.values())
    while departed and (len(departed) > limits.max_departed_members or total > limits.max_departed_partitions):
        oldest = departed.pop(next(iter(departed)))
        total -= sum(a.size for a in oldest.owned.values())


class _RoundContext:
    """What every strategy's rounds for one event share: layouts, member mapping, the spec skeleton."""

    def __init__(self, tr: _Transition, new_sizes: np.ndarray, old_to_new: np.ndarray,
                 rack_bits: np.ndarray | None, ev: Event, emit: _Emitter) -> None:
        old = tr.old
        self.tr, self.old, self.emit, self.ev = tr, old, emit, ev
        self.topics = tr.topics
        self.sizes = new_sizes
        self.num_partitions = int(new_sizes.sum())
        self.starts = np.concatenate([[0], np.cumsum(new_sizes)])
        self.old_to_new = old_to_new
        self.rack_bits = rack_bits
        members = tr.members
        self.member_ids = [m.id for m in members]
        m_new = len(members)
        # old member index -> new index (-1: left); leavers get union indices after the new members
        self.remap = np.full(len(old.members), -1, dtype=np.int32)
        for i, c in enumerate(tr.carry):
            if isinstance(c, int):
                self.remap[c] = i
        self.leavers = np.flatnonzero(self.remap < 0).tolist()
        self.to_union = self.remap.copy()
        for k, j in enumerate(self.leavers):
            self.to_union[j] = m_new + k
        self.union_ids = self.member_ids + [old.members[j].id for j in self.leavers]
        old_padded = np.zeros(new_sizes.size, dtype=np.int64)
        old_padded[: old.sizes.size] = old.sizes
        self.union_sizes = np.maximum(old_padded, new_sizes)
        # the usual event: nobody left and no topic was deleted, so union arrays are the new ones as they are
        self.union_is_new = not self.leavers and bool(np.array_equal(self.union_sizes, new_sizes))
        if not self.union_is_new:
            self.old_to_union = _layout_map(old.sizes, self.union_sizes)
            self.new_to_union = _layout_map(new_sizes, self.union_sizes)
        # topics with metadata, as the assignors see them
        live = np.flatnonzero(new_sizes > 0)
        self.live_index = np.full(new_sizes.size, -1, dtype=np.int32)
        self.live_index[live] = np.arange(live.size, dtype=np.int32)
        self.live_names = [self.topics[t] for t in live.tolist()]
        self.partition_topic = np.repeat(np.arange(live.size, dtype=np.int32), new_sizes[live])
        by_name = sorted(live.tolist(), key=lambda t: java_string_key(self.topics[t]))
        self.ids_by_name = (np.concatenate([np.arange(self.starts[t], self.starts[t + 1]) for t in by_name])
                            if by_name else np.zeros(0, dtype=np.int64))
        self.name_rank = np.empty(self.num_partitions, dtype=np.int64)
        self.name_rank[self.ids_by_name] = np.arange(self.num_partitions)
        cache: dict[int, np.ndarray] = {}  # by tuple identity: members share subscription tuples
        self.subscribed = np.zeros((m_new, live.size), dtype=bool)
        self.member_topics = []
        for i, m in enumerate(members):
            ts = cache.get(id(m.topics))
            if ts is None:
                idx = np.array([tr.topic_index.get(t, -1) for t in m.topics], dtype=np.int64)
                idx = self.live_index[idx[idx >= 0]]
                ts = cache[id(m.topics)] = idx[idx >= 0]
            self.member_topics.append(ts)
            self.subscribed[i, ts] = True
        old_topic = np.repeat(np.arange(old.sizes.size, dtype=np.int64), old.sizes)
        self.old_keys = (old_topic << 32) | (np.arange(old_topic.size, dtype=np.int64) - old.starts()[old_topic])
        self.leaver_owned: dict[int, dict[str, np.ndarray]] = {j: {} for j in self.leavers}
        self.cause = self._cause(ev, emit.rec.source)
        self.event_ts = ev.ts if ev.ts is not None else emit.rec.timestamp_ms

    def _cause(self, ev: Event, source: dict) -> dict[str, Any]:
        kind = {Join: "join", Leave: "leave", Subscribe: "subscribe", Partitions: "partitions",
                DeleteTopic: "delete_topic"}[type(ev)]
        cause: dict[str, Any] = {"type": kind}
        if isinstance(ev, (Join, Leave, Subscribe)):
            cause["member"] = ev.member
        if self.tr.replaced is not None:
            cause["replaced"] = self.tr.replaced[1]
        if isinstance(ev, DeleteTopic):
            cause["topic"] = ev.topic
        cause["source"] = source
        return cause

    def departed_record(self, j: int) -> DepartedMember:
        owned = self.leaver_owned[j]
        gens = {name: int(self.old.strategies[name].member_generation[j]) for name in owned}
        return DepartedMember(self.old.members[j].id, gens, owned)

    def _owned(self, name: str, st: StrategyState, owner: np.ndarray,
               generation: int | None) -> tuple[list[np.ndarray], np.ndarray]:
        """Each member's owned partitions (Kafka's sorted (topic, partition) order) and generation."""
        m_new = len(self.member_ids)
        who = owner[self.ids_by_name]
        sel = who >= 0
        ids, who = self.ids_by_name[sel], who[sel]
        if name in COOPERATIVE:  # a cooperative consumer revokes unsubscribed topics before it rejoins
            keep = self.subscribed[who, self.partition_topic[ids]]
            ids, who = ids[keep], who[keep]
        order = np.argsort(who, kind="stable")
        bounds = np.searchsorted(who[order], np.arange(m_new + 1))
        ids = ids[order]
        owned = [ids[bounds[i]:bounds[i + 1]] for i in range(m_new)]
        if generation is not None:
            return owned, np.full(m_new, generation, dtype=np.int64)
        gens = np.full(m_new, -1, dtype=np.int64)
        for i, c in enumerate(self.tr.carry):
            if isinstance(c, int):
                gens[i] = st.member_generation[c]
            elif isinstance(c, str):
                gone = self.old.departed[c]
                keys = gone.owned.get(name)
                if keys is None or self.sizes.size == 0:
                    continue
                gens[i] = gone.generations[name]
                t, p = keys >> 32, keys & 0xFFFFFFFF
                ok = (t < self.sizes.size) & (p < self.sizes[np.minimum(t, self.sizes.size - 1)])
                gids = self.starts[t[ok]] + p[ok]
                if name in COOPERATIVE:
                    gids = gids[self.subscribed[i, self.partition_topic[gids]]]
                owned[i] = gids[np.argsort(self.name_rank[gids], kind="stable")]
        return owned, gens

    def _stale_claims(self, name: str) -> bool:
        """Whether a member still reports partitions that no longer exist (a deleted topic it still
        subscribes to): Kafka's consumer sees them revoked by the round and rejoins at once."""
        owner = self.old.strategies[name].owner
        gone = (self.old_to_new < 0) & (owner >= 0)
        pairs = {(m, t) for m, t in zip(self.remap[owner[gone]].tolist(), (self.old_keys[gone] >> 32).tolist(),
                                         strict=True) if m >= 0}
        for i, c in enumerate(self.tr.carry):
            if isinstance(c, str):
                keys = self.old.departed[c].owned.get(name, np.zeros(0, np.int64))
                topic = keys >> 32
                pairs.update((i, t) for t in np.unique(topic[(keys & 0xFFFFFFFF) >= self.sizes[topic]]).tolist())
        members = self.tr.members
        return any(self.topics[t] in members[i].topics for i, t in pairs)

    def _assign(self, name: str, owned: list[np.ndarray], gens: np.ndarray) -> np.ndarray:
        members = self.tr.members
        spec = GroupSpec(
            topic_names=self.live_names,
            topic_sizes=self.sizes[self.sizes > 0],
            member_ids=self.member_ids,
            subscriptions=[m.topics for m in members],
            member_topics=self.member_topics,
            owned=owned,
            generations=gens,
            racks=[m.rack for m in members],
            instance_ids=[m.instance_id for m in members],
            rack_names=self.tr.rack_names if self.rack_bits is not None else [],
            partition_rack_bits=self.rack_bits,
        )
        return _owner_of(assign_spec(name, spec), self.num_partitions)

    def run(self, name: str, st: StrategyState, rebalance: bool) -> StrategyState:
        """One strategy's replacement record and rounds for this event; its new state."""
        prev_old = st.owner
        for j in self.leavers:
            self.leaver_owned[j][name] = self.old_keys[prev_old == j]
        prev_new = _move(_translate(prev_old, self.remap), self.old_to_new, self.num_partitions, -1)
        prev_union = (prev_new if self.union_is_new else
                      _move(_translate(prev_old, self.to_union), self.old_to_union, int(self.union_sizes.sum()), -1))
        if self.tr.replaced is not None:
            self._replace_record(name, st.generation, prev_union, prev_new)
        if not rebalance:
            return StrategyState(st.generation, prev_new, st.member_generation.copy())
        rounds: list[_Round] = []
        generation = st.generation
        owner, owner_gen = prev_new, None
        while True:
            owned, gens = self._owned(name, st, owner, owner_gen)
            new_owner = self._assign(name, owned, gens)
            generation += 1
            first = not rounds
            if first:
                new_union = new_owner if self.union_is_new else _move(new_owner, self.new_to_union, prev_union.size, -1)
                changes, assigned, revoked = member_changes(prev_union, new_union, self.union_ids, self.topics,
                                                            self.union_sizes)
                paused = revoked if name in COOPERATIVE | INCREMENTAL else int((prev_union >= 0).sum())
            else:
                changes, assigned, revoked = member_changes(owner, new_owner, self.member_ids, self.topics, self.sizes)
                paused = revoked
            metrics = build_metrics(owner if not first else prev_new, new_owner, self.partition_topic,
                                    self.subscribed, assigned=assigned, revoked=revoked, paused=paused,
                                    optimality=self.tr.config.optimality)
            phase = "eager" if name not in COOPERATIVE else "revoke" if first else "followup"
            head = {"group": self.emit.group, "strategy": name, "generation": generation, "phase": phase,
                    "cause": self.cause}
            rounds.append(_Round(head, changes, metrics))
            owner, owner_gen = new_owner, generation
            if name not in COOPERATIVE or not (_withheld(owned, new_owner) or (first and self._stale_claims(name))):
                break
            if len(rounds) > self.tr.limits.max_followup_rounds:
                rounds[-1].metrics["unconverged"] = True
                break
        for r in rounds:
            self.emit.diff(r.head, r.changes, r.metrics, self.event_ts)
        return StrategyState(generation, owner, np.full(len(self.member_ids), generation, dtype=np.int32))

    def _replace_record(self, name: str, generation: int, prev_union: np.ndarray, prev_new: np.ndarray) -> None:
        """A static replacement moves the old id's partitions to the new id: no round, but diff readers
        replaying `changes` must learn of it."""
        index, old_id = self.tr.replaced  # type: ignore[misc]
        before = np.where(prev_union == index, len(self.union_ids), prev_union)
        changes, assigned, revoked = member_changes(before, prev_union, [*self.union_ids, old_id], self.topics,
                                                    self.union_sizes)
        metrics = build_metrics(prev_new, prev_new, self.partition_topic, self.subscribed,
                                assigned=assigned, revoked=revoked, paused=0, optimality=self.tr.config.optimality)
        head = {"group": self.emit.group, "strategy": name, "generation": generation, "phase": "replace",
                "cause": self.cause}
        self.emit.diff(head, changes, metrics, self.event_ts)


def _withheld(owned: list[np.ndarray], new_owner: np.ndarray) -> bool:
    """Whether some member lost a partition it brought in (it revokes and rejoins at once)."""
    return any(bool(np.any(new_owner[ids] != i)) for i, ids in enumerate(owned) if ids.size)

"""Step 3 of an event: one strategy's rebalance rounds, as a real group of that strategy would run them.

Eager strategies run one round in which every member gives up everything it held; cooperative-sticky runs a
revoke round and, when it withheld partitions that a member brought in, follow-up rounds until the group
settles; the KIP-848 broker-side strategies run one round and revoke only the partitions that move. Each
round calls the assignor with every member's owned partitions (in Kafka's sorted order) and generation, and
emits one diff record per round. At a recorded generation the group's own strategy plays its first round only
(its log records the rounds that follow as generations), and an emptied group's round pauses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Any

import numpy as np

from assignors import OWNERSHIP_BLIND, RATE_AWARE, SUBSCRIBERS_ONLY, GroupSpec, KafkaAssignorError, assign_owners
from assignors.optimality import SMALL_ROUND, Counts, round_counts
from assignors.registry import CONSUMER_PROTOCOL
from streaming.core.changes import member_changes
from streaming.core.config import PipelineConfig
from streaming.core.cost import NOTHING_PAUSED, Paused
from streaming.core.layout import Relayout, move, relaid_generations, relaid_owner, union_owner, union_values
from streaming.core.records import Emitter
from streaming.core.round_metrics import build_metrics
from streaming.core.shape import GroupShape
from streaming.core.state_codec import GroupState, StrategyState
from streaming.core.traffic import GroupLoad

COOPERATIVE = frozenset({"cooperative-sticky"})  # revoke round + follow-ups; pauses only what it revokes
INCREMENTAL = CONSUMER_PROTOCOL  # KIP-848: one round; the coordinator revokes only movers
_NO_CLAIM = np.zeros(0, dtype=np.int64)
_NO_CLAIM.flags.writeable = False
_UNCLAIMED: dict[int, np.ndarray] = {}  # member count -> read-only generations of nobody (-1), one array per count
_ONE = np.array(1, np.int32)  # a 0-d operand: numpy converts a Python int operand on every call
_IDENTITY: list[int] = []  # 0, 1, 2, ...: `_name_ids` of a small round in name order, grown as needed


@dataclass
class _Round:
    head: dict[str, Any]
    changes: dict
    metrics: dict[str, Any]
    paused: Paused | None  # what it pauses, for its `lag_added` (None: the group has no traffic)


class StrategyRounds:
    """What every strategy's rounds for one event share; `run` plays one strategy's rounds."""

    def __init__(self, old: GroupState, shape: GroupShape, lay: Relayout, config: PipelineConfig, emit: Emitter,
                 cause: dict[str, Any], event_ts: int | None, own_strategy: str | None = None,
                 emptied: bool = False) -> None:
        self.old, self.shape, self.lay, self.config, self.emit = old, shape, lay, config, emit
        self.cause, self.event_ts = cause, event_ts
        # a recorded generation's protocol: that strategy plays one round, as the group's next rounds (follow-ups,
        # rejoins) are generations of their own in its log
        self.own_strategy = own_strategy
        self.emptied = emptied  # a recorded emptied group: its members stopped, nobody waits for the round
        self._spec: GroupSpec | None = None  # one per event: what the assignors derive from it is kept
        self._topics: list[int] | None = None  # `_partition_topics`, made on first use
        self._by_member_key: bytes = b""  # the last `_by_member` call's owners and its answer (None: none yet)
        self._by_member_value: list[Any] | None = None
        # a small round's claims are lists of ints end to end (`GroupSpec.for_round`'s `owned_lists`): the
        # assignors' small paths read lists, and a numpy slice per member costs more than its few ids
        self._listed = lay.num_partitions <= SMALL_ROUND
        self._names: list[int] | None = None  # `_name_ids`, made on a small round's first use
        # what the last `_owned` call's claims come from: (filtered, its owners' bytes), None: not from the owners
        # alone; `_assign` names a round's claims by it (`GroupSpec.claims_key`)
        self._claims_key: tuple[bool, bytes] | None = None
        # the event's msgs/s per partition (None: no subscribed topic has traffic): every record's load fields, and
        # what a rate-aware strategy balances (`assignors.RATE_AWARE`)
        self.load: GroupLoad | None = None
        self._union_rates: np.ndarray | None = None  # `load.rates` on the union layout, made on first use

    def run(self, name: str, st: StrategyState, rebalance: bool) -> StrategyState:
        """One strategy's replacement record and rounds for this event; its new state."""
        lay = self.lay
        prev_old = st.owner
        prev_new = relaid_owner(prev_old, lay)
        prev_union = prev_new if lay.union_is_new else union_owner(prev_old, lay)
        if self.shape.replaced is not None:
            self._replace_record(name, st.generation, prev_union, prev_new)
        if not rebalance:
            return StrategyState(st.generation, prev_new, relaid_generations(st.member_generation, lay))
        rounds: list[_Round] = []
        generation = st.generation
        owner = prev_new
        owner_gen: int | None = None
        cause = self.cause
        rejoin: dict[int, tuple[Any, int]] = {}  # members that rejected their last assignment
        blind = name in OWNERSHIP_BLIND and name not in COOPERATIVE  # a cooperative round reads its claims below
        while True:
            # the members' claims (owned partitions, generations), built only when an assignor or a rule reads them
            claims = None if blind and not rejoin else self._claims(name, st, owner, owner_gen, rejoin)
            disjoint = claims is not None and self._disjoint(owner_gen, rejoin)
            try:
                new_owner = self._assign(name, claims, disjoint)
            except KafkaAssignorError as err:  # Kafka's leader fails here: a generation without a new assignment
                generation += 1
                rounds.append(self._failed_round(name, generation, not rounds, owner, err))
                for r in rounds:
                    self.emit.diff(r.head, r.changes, r.metrics, self.event_ts, r.paused)
                if owner_gen is None:
                    member_generation = np.array((claims or self._claims(name, st, owner, owner_gen, rejoin))[1])
                else:
                    member_generation = np.full(len(lay.member_ids), owner_gen)
                return StrategyState(generation, owner, member_generation.astype(np.int32))
            generation += 1
            first = not rounds
            before = prev_new if first else owner
            # a first round's changes are over the union layout (a leaver's partitions revoked, a deleted topic's
            # too), its metrics over the new one
            new_union = new_owner  # the round's owners on the layout its changes use: the union one for a first round
            if first:
                new_union = new_owner if lay.union_is_new else move(
                    new_owner, lay.new_to_union, prev_union.size, -1)  # type: ignore[arg-type]
                changes, assigned, revoked = member_changes(prev_union, new_union, lay.union_ids,
                                                            self.shape.topics, lay.union_sizes)
            else:
                changes, assigned, revoked = member_changes(owner, new_owner, lay.member_ids, self.shape.topics,
                                                            lay.sizes)
            counts = round_counts(before, new_owner, lay.partition_topic)
            paused = revoked  # an eager first round pauses everything held:
            eager = first and name not in COOPERATIVE and name not in INCREMENTAL
            if self.emptied:
                paused = 0
            elif eager:
                paused = int(np.count_nonzero(prev_union >= 0))
            metrics = build_metrics(before, new_owner, lay.partition_topic,
                                    lay.subscribed, assigned=assigned, revoked=revoked, paused=paused,
                                    optimality=self.config.optimality, counts=counts,
                                    groups=lay.topic_groups)
            self._add_load(metrics, new_owner)
            phase = _phase(name, first)
            head = {"group": self.emit.group, "strategy": name, "generation": generation, "phase": phase,
                    "cause": cause}
            rounds.append(_Round(head, changes, metrics, self._paused(first, eager, owner, new_owner, prev_union,
                                                                      new_union)))
            if name == self.own_strategy:
                owner, owner_gen = new_owner, generation
                break
            rejecting = [] if name in SUBSCRIBERS_ONLY else self._rejecting(counts)
            if rejecting and claims is None:  # what the rejecting members claimed, for their rejoin below
                claims = self._claims(name, st, owner, owner_gen, rejoin)
            owner, owner_gen = new_owner, generation
            more = bool(rejecting) or (
                name in COOPERATIVE and (self._lost_claim(claims[0], new_owner, counts, disjoint)  # type: ignore[index]
                                         or (first and self._stale_claims(name))))
            if not more:
                break
            if len(rounds) > self.config.limits.max_followup_rounds:
                rounds[-1].metrics["unconverged"] = True
                break
            # A consumer whose assignment holds a topic it does not subscribe to rejects it and rejoins
            # (ConsumerCoordinator.onJoinComplete): it keeps reporting what it owned before, with its old
            # userData generation (eager sticky) or the current protocol generation (cooperative).
            owned, gens = claims  # type: ignore[misc]
            rejoin = {i: (owned[i], generation if name in COOPERATIVE else gens[i]) for i in rejecting}
            if rejecting:
                cause = self._rejoin_cause(rejecting, new_owner)
        for r in rounds:
            self.emit.diff(r.head, r.changes, r.metrics, self.event_ts, r.paused)
        return StrategyState(generation, owner, np.full(len(lay.member_ids), generation, dtype=np.int32))

    def close(self) -> None:
        """Releases the event's spec (`GroupSpec.release`): what the assignors kept with it for the event's rounds
        refers back to it, a cycle that only the garbage collector would free, late and at a cost."""
        if self._spec is not None:
            self._spec.release()

    def _paused(self, first: bool, eager: bool, owner: np.ndarray, new_owner: np.ndarray, prev_union: np.ndarray,
                new_union: np.ndarray) -> Paused | None:
        """What a round pauses, for its `lag_added` (None: the group has no traffic): a first round's on the union
        layout (a leaver's partitions too), a follow-up's on the new one; nothing when the group emptied."""
        if self.load is None:
            return None
        if self.emptied:
            return NOTHING_PAUSED
        if not first:
            return Paused(self.load.rates, owner, new_owner)
        if self._union_rates is None:  # the event's strategies share it
            self._union_rates = union_values(self.load.rates, self.lay)
        return Paused(self._union_rates, prev_union, None if eager else new_union)

    def _add_load(self, metrics: dict[str, Any], owner: np.ndarray) -> None:
        """A record's load fields (docs/events-and-diffs.md), after its other metrics, for a group with traffic."""
        if self.load is not None:
            metrics.update(self.load.fields(owner, len(self.lay.member_ids)))

    def _rejecting(self, counts: Counts) -> list[int]:
        """Members given a partition of a topic they do not subscribe to (Kafka's sticky engine can hand
        one back to a previous owner, docs/assignors.md), ascending: read off the round's `round_counts` (a few
        distinct (topic, owner) pairs)."""
        rows = self.lay.subscribed_rows
        rejecting: set[int] = set()
        for k in range(0, len(counts), 4):
            n = counts[k + 2]
            if n >= 0 and not rows[n][counts[k]]:
                rejecting.add(n)
        return sorted(rejecting) if rejecting else []

    def _rejoin_cause(self, rejecting: list[int], new_owner: np.ndarray) -> dict[str, Any]:
        lay = self.lay
        what = []
        for i in rejecting:
            held = np.flatnonzero(new_owner == i)
            bad = held[~lay.subscribed[i, lay.partition_topic[held]]]
            names = sorted({lay.live_names[t] for t in lay.partition_topic[bad].tolist()})
            what.append(f"{lay.member_ids[i]} got partitions of {', '.join(names)}, which it does not subscribe to")
        return {"type": "rejoin", "members": [lay.member_ids[i] for i in rejecting],
                "reason": "; ".join(what) + ": its consumer rejects the assignment and rejoins at once",
                "source": self.cause["source"]}

    def _failed_round(self, name: str, generation: int, first: bool, owner: np.ndarray,
                      err: KafkaAssignorError) -> _Round:
        """The record of a round in which Kafka's assignor throws: nothing changes, and `error` says what
        Kafka throws and on which input."""
        lay = self.lay
        metrics = build_metrics(owner, owner, lay.partition_topic, lay.subscribed, assigned=0, revoked=0, paused=0,
                                optimality=self.config.optimality)
        self._add_load(metrics, owner)
        head = {"group": self.emit.group, "strategy": name, "generation": generation, "phase": _phase(name, first),
                "cause": self.cause,
                "error": {"exception": err.exception, "message": err.message, "detail": err.detail}}
        return _Round(head, {}, metrics, None if self.load is None else NOTHING_PAUSED)

    def _claims(self, name: str, st: StrategyState, owner: np.ndarray, generation: int | None,
                rejoin: dict[int, tuple[Any, int]]) -> tuple[list[Any], list[int]]:
        """Each member's owned partitions (Kafka's sorted (topic, partition) order: a list of ints on a small
        round, an int64 array on a big one) and generation, as it reports them in the round's join: what it holds
        after the last round (`owner`, with that round's `generation`; None: the event's first round) unless it
        rejected that round (`rejoin`)."""
        owned, gens = self._owned(name, st, owner, generation)
        for i, (ids, gen) in rejoin.items():
            owned[i], gens[i] = ids, gen
        return owned, gens

    def _owned(self, name: str, st: StrategyState, owner: np.ndarray,
               generation: int | None) -> tuple[list[Any], list[int]]:
        """Each member's owned partitions (Kafka's sorted (topic, partition) order; `_claims`) and generation (a
        list: the form `GroupSpec.generation_list` holds)."""
        lay = self.lay
        m_new = len(lay.member_ids)
        # a cooperative consumer revokes unsubscribed topics before it rejoins: a big round filters in numpy,
        # a small one only when some member holds a partition of a topic it does not subscribe to
        claims: list[Any]  # arrays on a big round, lists on a small one
        if name in COOPERATIVE and not self._listed:
            self._claims_key = None
            claims = _split(self._subscribed_owners(owner), lay)
        else:
            claims = self._by_member(owner)
            self._claims_key = False, self._by_member_key
            if name in COOPERATIVE and _foreign(claims, self._partition_topics(), lay.subscribed_rows):
                self._claims_key = True, self._by_member_key
                claims = _listed(self._subscribed_owners(owner).tolist(), self._name_ids(), len(lay.member_ids))
        owned = list(claims)  # the caller replaces rejoining members' claims
        if generation is not None:
            return owned, [generation] * m_new
        gens = [-1] * m_new
        member_generation: list[int] = st.member_generation.tolist()
        for i, c in enumerate(self.shape.carry):
            if isinstance(c, int):
                gens[i] = member_generation[c]
            elif isinstance(c, str):
                gone = self.old.departed[c]
                keys = gone.owned.get(name)
                if keys is None or lay.sizes.size == 0:
                    continue
                gens[i] = gone.generations[name]
                t, p = keys >> 32, keys & 0xFFFFFFFF
                ok = (t < lay.sizes.size) & (p < lay.sizes[np.minimum(t, lay.sizes.size - 1)])
                gids = lay.starts[t[ok]] + p[ok]
                if name in COOPERATIVE:
                    gids = gids[lay.subscribed[i, lay.partition_topic[gids]]]
                gids = gids[np.argsort(lay.name_rank[gids], kind="stable")]
                owned[i] = gids.tolist() if self._listed else gids
        return owned, gens

    def _by_member(self, owner: np.ndarray) -> list[Any]:
        """Each member's partitions in name order (`_listed`, `_split`), kept for the next call on the same owners:
        the event's other strategy (on the bench log 95 % of cooperative first rounds see the owners of the sticky
        one) or a follow-up round."""
        key = owner.tobytes()
        if key != self._by_member_key or self._by_member_value is None:
            lay = self.lay
            who = owner if lay.in_name_order else owner[lay.ids_by_name]
            if self._listed:
                self._by_member_value = _listed(who.tolist(), self._name_ids(), len(lay.member_ids))
            else:
                self._by_member_value = _split(who, lay)
            self._by_member_key = key
        return self._by_member_value

    def _name_ids(self) -> list[int]:
        """`lay.ids_by_name` as a list on a small round; when it is the identity (`in_name_order`), the shared
        `_IDENTITY` (it may run longer): `_listed` then appends ints it does not have to create."""
        names = self._names
        if names is None:
            lay = self.lay
            if lay.in_name_order:
                if len(_IDENTITY) < lay.num_partitions:
                    _IDENTITY.extend(range(len(_IDENTITY), lay.num_partitions))
                names = _IDENTITY
            else:
                names = lay.ids_by_name.tolist()
            self._names = names
        return names

    def _subscribed_owners(self, owner: np.ndarray) -> np.ndarray:
        """`owner` in name order without the partitions of topics their owners do not subscribe to."""
        lay = self.lay
        who = owner[lay.ids_by_name]
        return np.where(lay.subscribed_or_nobody[who, lay.partition_topic[lay.ids_by_name]], who, -1)

    def _partition_topics(self) -> list[int]:
        """Each partition's live topic (by global id) when some member does not subscribe to every live topic,
        else [] (nobody can hold a foreign partition): per event, for every cooperative round's claims."""
        if self._topics is None:
            lay = self.lay
            self._topics = [] if all(all(row) for row in lay.subscribed_rows) else lay.partition_topic.tolist()
        return self._topics

    def _stale_claims(self, name: str) -> bool:
        """Whether a member still reports partitions that no longer exist (a deleted topic it still
        subscribes to): Kafka's consumer sees them revoked by the round and rejoins at once."""
        lay = self.lay
        pairs: set[tuple[int, int]] = set()  # (member, topic) of the stale claims
        if not lay.same_partitions:  # else no partition is gone
            owner = self.old.strategies[name].owner
            gone = (lay.old_to_new < 0) & (owner >= 0)
            pairs.update((m, t) for m, t in zip(lay.remap[owner[gone]].tolist(),
                                                (lay.old_keys[gone] >> 32).tolist(), strict=True) if m >= 0)
        for i, c in enumerate(self.shape.carry):
            if isinstance(c, str):
                keys = self.old.departed[c].owned.get(name, np.zeros(0, np.int64))
                topic = keys >> 32
                pairs.update((i, t) for t in np.unique(topic[(keys & 0xFFFFFFFF) >= lay.sizes[topic]]).tolist())
        members, topics = self.shape.members, self.shape.topics
        return any(topics[t] in members[i].topics for i, t in pairs)

    def _disjoint(self, generation: int | None, rejoin: dict[int, tuple[Any, int]]) -> bool:
        """Whether `_claims` (same arguments) are sure to claim no partition twice: they come from one owner per
        partition unless a member rejoins with what it claimed before (`rejoin`) or, in the event's first round
        (`generation` None), a static member comes back with what it held when it left."""
        return not rejoin and (generation is not None or not any(isinstance(c, str) for c in self.shape.carry))

    def _lost_claim(self, owned: list[Any], new_owner: np.ndarray, counts: Counts, disjoint: bool) -> bool:
        """Whether a cooperative member lost a partition it claimed (`_withheld`). Claims that are `_disjoint` are
        the round's previous owners' partitions less those of topics their owners do not subscribe to (`_owned`),
        so a round reads it off its `round_counts` (a few (topic, previous, new owner) triples) instead of every
        claim."""
        if not disjoint:
            return _withheld(owned, new_owner)
        rows = self.lay.subscribed_rows
        for k in range(0, len(counts), 4):
            a = counts[k + 1]
            if a >= 0 and counts[k + 2] != a and rows[a][counts[k]]:
                return True
        return False

    def _assign(self, name: str, claims: tuple[list[Any], list[int]] | None, disjoint: bool) -> np.ndarray:
        """One round's owners. Every round of the event (all strategies) is a copy of the same `GroupSpec`
        with its own `owned` and `generations` (`claims`; None: an `OWNERSHIP_BLIND` strategy, which gets the
        event's spec, with no claims, as it is; `disjoint`: `_disjoint`): what a spec derives (member orders, topic
        subscribers, partition tables) depends only on the topics and members, so it is computed once per event
        (the copies share it). `_disjoint` claims come from the owners alone, so `_owned`'s `_claims_key` names them
        (`GroupSpec.for_round`'s `claims_key`: rounds with the same key claim the same partitions)."""
        spec = self._spec or self._event_spec()
        if claims is None:
            return assign_owners(name, spec)
        owned, generations = claims
        key = self._claims_key if disjoint else None
        if name in RATE_AWARE:
            rates = None if self.load is None else self.load.rates
            return assign_owners(name, spec.for_round(owned, generations) if not self._listed else
                                 spec.for_round(None, generations, owned), rates)
        if self._listed:
            return assign_owners(name, spec.for_round(None, generations, owned, disjoint, key))
        return assign_owners(name, spec.for_round(owned, generations, disjoint=disjoint, claims_key=key))

    def _event_spec(self) -> GroupSpec:
        """The event's topics and members as a `GroupSpec` without claims (nobody owns anything)."""
        lay, members = self.lay, self.shape.members
        self._spec = lay.spec.with_members(
            member_ids=lay.member_ids,
            subscriptions=[m.topics for m in members],
            member_topics=lay.member_topics,
            owned=[_NO_CLAIM] * len(members),
            generations=_unclaimed(len(members)),
            racks=[m.rack for m in members],
            instance_ids=[m.instance_id for m in members],
            weights=np.array([m.weight for m in members]) if any(m.weight != 1 for m in members) else None,
            rack_names=self.shape.rack_names if lay.rack_bits is not None else [],
            partition_rack_bits=lay.rack_bits,
        )
        return self._spec

    def _replace_record(self, name: str, generation: int, prev_union: np.ndarray, prev_new: np.ndarray) -> None:
        """A static replacement moves the old id's partitions to the new id: no round, but diff readers
        replaying `changes` must learn of it."""
        lay = self.lay
        index, old_id = self.shape.replaced  # type: ignore[misc]
        before = np.where(prev_union == index, len(lay.union_ids), prev_union)
        changes, assigned, revoked = member_changes(before, prev_union, [*lay.union_ids, old_id], self.shape.topics,
                                                    lay.union_sizes)
        metrics = build_metrics(prev_new, prev_new, lay.partition_topic, lay.subscribed,
                                assigned=assigned, revoked=revoked, paused=0, optimality=self.config.optimality)
        self._add_load(metrics, prev_new)
        head = {"group": self.emit.group, "strategy": name, "generation": generation, "phase": "replace",
                "cause": self.cause}
        self.emit.diff(head, changes, metrics, self.event_ts, None if self.load is None else NOTHING_PAUSED)


def _unclaimed(num_members: int) -> np.ndarray:
    """The generations of an event spec's members, which claim nothing: shared read-only arrays, as an `np.full`
    per event cost most of building the spec."""
    generations = _UNCLAIMED.get(num_members)
    if generations is None:
        if len(_UNCLAIMED) >= 1024:
            _UNCLAIMED.clear()
        generations = _UNCLAIMED[num_members] = np.full(num_members, -1, dtype=np.int64)
        generations.flags.writeable = False
    return generations


def _phase(name: str, first: bool) -> str:
    """A round's `phase` (`record_encoding.PHASES`): how the strategy's protocol pauses partitions in it."""
    if name in COOPERATIVE:
        return "revoke" if first else "followup"
    return "incremental" if name in INCREMENTAL else "eager"


def _split(who: np.ndarray, lay: Relayout) -> list[np.ndarray]:
    """Each member's partitions in name order on a big round, given their owners in that order (`who`): slices of
    one stable sort of the owners, nobody's first; `argsort` the method, not numpy's wrapper."""
    ids = lay.ids_by_name[who.argsort(kind="stable")]
    bounds = accumulate(np.bincount(who + _ONE, minlength=len(lay.member_ids) + 1).tolist())
    return [ids[a:b] for a, b in pairwise(bounds)]


def _listed(held: list[int], names: list[Any], num_members: int) -> list[list[int]]:
    """Each member's partitions in name order on a small round, given their owners in that order (`held`) and the
    partitions in that order (`names`), as lists: one pass of appends, where numpy's sort and a slice per member
    cost more than the few dozen partitions."""
    owned: list[list[Any]] = [[] for _ in range(num_members)]
    for k, w in enumerate(held):
        if w >= 0:
            owned[w].append(names[k])
    return owned


def _foreign(claims: list[list[int]], topics: list[int], rows: list[list[bool]]) -> bool:
    """Whether a member holds a partition (`claims`: `_listed`) of a topic it does not subscribe to (`topics`:
    each partition's topic, [] when every member subscribes to every topic; `rows`: `Relayout.subscribed_rows`):
    member by member, one row read per member rather than per partition."""
    if not topics:
        return False
    for m in range(len(claims)):
        row = rows[m]
        for p in claims[m]:
            if not row[topics[p]]:
                return True
    return False


def _withheld(owned: list[Any], new_owner: np.ndarray) -> bool:
    """Whether some member lost a partition it brought in (it revokes and rejoins at once). A small round loops
    over its claims' lists (`_claims`) and stops at the first one (its few members cost less than numpy calls);
    a big round's claims are compared in one vectorised test."""
    if new_owner.size > SMALL_ROUND:
        sizes = [ids.size for ids in owned]
        return any(sizes) and bool(
            (new_owner[np.concatenate(owned)] != np.repeat(np.arange(len(owned)), sizes)).any())
    if not any(owned):
        return False
    owners: list[int] = new_owner.tolist()
    for i, claimed in enumerate(owned):
        listed: list[int] = claimed
        for p in listed:
            if owners[p] != i:
                return True
    return False

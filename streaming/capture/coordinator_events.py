"""`rebalance capture`: the group coordinator's records -> membership events (docs/events-and-diffs.md §1).

`Translator` is the pure part: it is fed the offsets topic's records in partition-offset order (a group's
records all live in one partition, so per-group order is the log order) and returns the events each record
completes:

- classic groups (GroupMetadata, record type 2, ``protocolType == "consumer"``): each stored generation
  becomes one ``generation`` event with the members' subscriptions and assignments; the coordinator stores a
  group after every completed SyncGroup and when it becomes Empty (then ``members`` is empty). A record that
  repeats the last generation is no rebalance: a static member that rejoined under a new member id becomes a
  ``join`` with its ``instance_id`` (a static replacement, docs/events-and-diffs.md §1), anything else is
  dropped. A tombstone of
  a captured group becomes ``delete_group``. Other protocol types (connect, streams, ...) and offset commits
  are counted and skipped.
- KIP-848 consumer groups (record types 3-8): member metadata, target assignment and current assignment
  records are accumulated; each target-assignment epoch (type 6, written after the epoch's member targets)
  becomes one ``generation`` event, its target assignment as ``assigned``, each member's current assignment
  as ``owned``, and the group's server assignor as ``protocol`` (``uniform``; the broker's ``range`` is the
  library's ``server-range``). Topic ids resolve through the group's PartitionMetadata record (type 4),
  whose partition counts also give ``partitions`` events, else through cluster metadata (`topic_name`; an
  id nobody names stays as the id and is counted); a tombstone of the group epoch record (type 3) is
  ``delete_group``.
- KIP-848 consumer groups polled with ConsumerGroupDescribe (`consumer_group`): one ``generation`` event per
  target-assignment epoch seen, numbered by that epoch, members' target assignments as ``assigned``.
- classic groups polled with DescribeGroups (`described`, `rebalancing`): the capture numbers the
  generations itself, and times the rebalances it watches (``rebalance_ms``, ``rebalance_bounds_ms``).
- before a group's ``generation`` event, a ``partitions`` event carries the partition counts of its topics
  that the group has not been told yet (from cluster metadata, see `metadata`); a later metadata change gives
  ``partitions`` / ``delete_topic`` events to every captured group subscribed to the topic.

Records that cannot be decoded are returned as `Undecodable` (position + reason), never dropped silently.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assignors.javaorder import hashmap_order
from streaming.capture.coordinator_records import (
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupKey,
    ConsumerGroupMemberMetadataValue,
    CoordinatorRecordError,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OtherKey,
    TopicIdPartitions,
    TopicPartitions,
    decode_assignment,
    decode_cooperative_user_data,
    decode_key,
    decode_sticky_user_data,
    decode_subscription,
    decode_value,
)
from streaming.capture.group_messages import DescribedConsumerGroup, TopicAssignment

Event = dict[str, Any]
SERVER_ASSIGNORS = {"uniform": "uniform", "range": "server-range"}  # KIP-848 assignor name -> strategy name
DEFAULT_SERVER_ASSIGNOR = "uniform"  # Kafka's group.consumer.assignors default: the first one, uniform


@dataclass(frozen=True)
class Undecodable:
    """A record that is no valid coordinator record: reported with its position, then skipped."""

    partition: int
    offset: int
    reason: str


def _sourced(event: Event, source: dict | None) -> Event:
    """The event with the offsets-topic position it came from (none for polled snapshots)."""
    if source is not None:
        event["source"] = source
    return event


def _by_instance(members: Mapping[str, Mapping[str, Any]]) -> list[Any] | None:
    """The membership with static members keyed by instance id instead of member id (None if a member is
    not static): equal for two snapshots that differ only by static members' new member ids."""
    if not all(m.get("instance_id") for m in members.values()):
        return None
    return sorted((m["instance_id"], sorted((k, repr(v)) for k, v in m.items())) for m in members.values())


def _by_topic(partitions: TopicPartitions) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, parts in partitions:
        out.setdefault(topic, []).extend(parts)
    return {t: sorted(p) for t, p in out.items()}


def _owned(protocol: str | None, sub: Any) -> tuple[dict[str, list[int]] | None, int | None]:
    """What a member reported holding, and from which generation, the way its protocol's assignor reads it:
    eager ``sticky`` only from its userData (Java ``StickyAssignor.memberData``), ``cooperative-sticky`` from
    ownedPartitions + generationId, falling back to the generation in its userData before Subscription v2
    (``CooperativeStickyAssignor.memberData``); other protocols from ownedPartitions / generationId."""
    if protocol == "sticky":
        if not sub.user_data:
            return None, None
        try:
            data = decode_sticky_user_data(sub.user_data)
        except CoordinatorRecordError:
            return None, None  # Java ignores undecodable userData (the member starts from nothing)
        return _by_topic(data.partitions), data.generation
    owned = _by_topic(sub.owned_partitions) if sub.version >= 1 else None
    generation = sub.generation_id if sub.version >= 2 else None
    if protocol == "cooperative-sticky" and generation is None and sub.user_data:
        try:
            generation = decode_cooperative_user_data(sub.user_data)
        except CoordinatorRecordError:
            generation = None
    return owned, generation


def _classic_member(protocol: str | None, m: MemberMetadata) -> dict[str, Any]:
    sub = decode_subscription(m.subscription)
    out: dict[str, Any] = {"topics": list(sub.topics), "rack": sub.rack_id, "instance_id": m.group_instance_id}
    owned, owned_generation = _owned(protocol, sub)
    if owned is not None:
        out["owned"] = owned
    if owned_generation is not None:
        out["owned_generation"] = owned_generation
    if m.assignment:  # empty bytes: the member joined but the leader's SyncGroup gave it nothing to store
        out["assigned"] = _by_topic(decode_assignment(m.assignment).partitions)
    out["client_id"] = m.client_id
    out["client_host"] = m.client_host
    return out


@dataclass
class _Group:
    """What the capture knows about one group."""

    generation: int | None = None  # last emitted generation
    members: dict[str, dict[str, Any]] = field(default_factory=dict)  # last emitted membership
    told: dict[str, int] = field(default_factory=dict)  # partition counts already emitted to this group
    # KIP-848 state
    topic_names: dict[str, str] = field(default_factory=dict)  # topic id -> name (PartitionMetadata)
    counts: dict[str, int] = field(default_factory=dict)  # topic name -> partitions (PartitionMetadata)
    cg_members: dict[str, ConsumerGroupMemberMetadataValue] = field(default_factory=dict)
    targets: dict[str, TopicIdPartitions] = field(default_factory=dict)
    current: dict[str, ConsumerGroupCurrentMemberAssignmentValue] = field(default_factory=dict)
    # DescribeGroups polls of a classic group
    seen_settled: int | None = None  # the last poll that saw it Stable or Empty
    rebalance: tuple[int, int, int | None] | None = None  # polls that saw it rebalancing: first, last, the one before


class Translator:
    """Coordinator records in, membership events out (see the module docstring)."""

    def __init__(self, topic: str, groups: re.Pattern[str] | None = None,
                 partition_count: Callable[[str], int | None] = lambda _t: None,
                 topic_name: Callable[[str], str | None] = lambda _id: None,
                 cluster_topics: Callable[[], Iterable[str]] = tuple) -> None:
        self.topic = topic
        self.groups = groups
        self.partition_count = partition_count  # cluster metadata: topic -> partition count (None: unknown)
        self.topic_name = topic_name  # cluster metadata: topic id -> name, when no PartitionMetadata names it
        self.cluster_topics = cluster_topics  # cluster metadata: every topic name (for regex subscriptions)
        self.state: dict[str, _Group] = {}
        self.stats: Counter[str] = Counter()

    # ------------------------------------------------------------------------------------------ records

    def record(self, key: bytes | None, value: bytes | None, partition: int, offset: int,
               timestamp: int) -> list[Event] | Undecodable:
        """The events completed by one offsets-topic record (often none)."""
        self.stats["records"] += 1
        if key is None:
            return self._undecodable(partition, offset, "record without a key")
        try:
            k = decode_key(key)
            if isinstance(k, OffsetCommitKey):
                self.stats["offset_commits"] += 1
                return []
            if isinstance(k, OtherKey):
                self.stats["other_record_types"] += 1
                return []
            if self.groups is not None and not self.groups.search(k.group):
                self.stats["filtered_groups"] += 1
                return []
            v = decode_value(k, value)
            source = {"topic": self.topic, "partition": partition, "offset": offset}
            if isinstance(k, GroupMetadataKey):
                return self._classic(k.group, v, source, timestamp)  # type: ignore[arg-type]
            return self._consumer_group(k, v, source, timestamp)
        except CoordinatorRecordError as err:
            return self._undecodable(partition, offset, str(err))

    def _undecodable(self, partition: int, offset: int, reason: str) -> Undecodable:
        self.stats["undecodable"] += 1
        return Undecodable(partition, offset, reason)

    def _classic(self, group: str, v: GroupMetadataValue | None, source: dict | None,
                 timestamp: int) -> list[Event]:
        if v is None:
            return self._delete(group, source, timestamp)
        if v.protocol_type != "consumer":
            self.stats["non_consumer_groups"] += 1
            return []
        members = {m.member_id: _classic_member(v.protocol, m) for m in v.members}
        ts = v.current_state_timestamp if v.current_state_timestamp >= 0 else timestamp
        st = self.state.setdefault(group, _Group())
        if st.generation == v.generation:
            return self._same_generation(group, st, members, source, ts)
        return self._generation(group, st, v.generation, v.protocol, v.leader, members, source, ts)

    def _same_generation(self, group: str, st: _Group, members: dict[str, dict[str, Any]], source: dict | None,
                         ts: int) -> list[Event]:
        """A re-stored generation: only a static member's new member id is news (KIP-345 replacement)."""
        out = []
        by_instance = {m.get("instance_id"): mid for mid, m in st.members.items() if m.get("instance_id")}
        for mid, m in members.items():
            old = by_instance.get(m.get("instance_id"))
            if mid not in st.members and old is not None:
                out.append(_sourced({"group": group, "type": "join", "member": mid, "topics": m["topics"],
                                     "rack": m["rack"], "instance_id": m["instance_id"], "ts": ts}, source))
        if out:
            st.members = members
        else:
            self.stats["repeated_generations"] += 1
        return out

    def _generation(self, group: str, st: _Group, generation: int, protocol: str | None, leader: str | None,
                    members: dict[str, dict[str, Any]], source: dict | None, ts: int,
                    counts: Mapping[str, int] | None = None) -> list[Event]:
        out = self._partitions_for(group, st, members, counts, source, ts)
        st.generation = generation
        st.members = members
        out.append(_sourced({"group": group, "type": "generation", "generation": generation,
                             "protocol_type": "consumer", "protocol": protocol, "leader": leader, "ts": ts,
                             "members": members}, source))
        self.stats["generation_events"] += 1
        return out

    def _partitions_for(self, group: str, st: _Group, members: Mapping[str, Mapping[str, Any]],
                        counts: Mapping[str, int] | None, source: dict | None, ts: int) -> list[Event]:
        """A `partitions` event with the counts of the group's topics it has not been told yet."""
        topics: dict[str, None] = {}
        for m in members.values():
            topics.update(dict.fromkeys(m["topics"]))
            topics.update(dict.fromkeys(m.get("assigned", ())))
        new = {}
        for t in topics:
            n = counts.get(t) if counts is not None and t in counts else self.partition_count(t)
            if n is not None and n >= 1 and st.told.get(t) != n:
                new[t] = n
        if not new:
            return []
        st.told.update(new)
        return [_sourced({"group": group, "type": "partitions", "partitions": new, "ts": ts}, source)]

    def _delete(self, group: str, source: dict | None, ts: int) -> list[Event]:
        if self.state.pop(group, None) is None:
            self.stats["tombstones_of_unknown_groups"] += 1
            return []
        return [_sourced({"group": group, "type": "delete_group", "ts": ts}, source)]

    # ---------------------------------------------------------------------------- DescribeGroups polls

    def described(self, group: str, protocol: str | None, members: Iterable[MemberMetadata],
                  ts: int) -> list[Event] | Undecodable:
        """A DescribeGroups snapshot of a classic consumer group that is Stable or Empty: a `generation` event
        when it differs from the last one, or when earlier polls saw the group rebalancing (then it carries
        the rebalance's timing, see `rebalancing`). Numbered by the capture: DescribeGroups carries no
        generation, so `skipped_generations` cannot be known, and a rebalance that changed nothing and fell
        between two polls is not seen."""
        try:
            decoded = {m.member_id: _classic_member(protocol, m) for m in members}
        except CoordinatorRecordError as err:
            return self._undecodable(-1, -1, f"group {group!r}: {err}")
        st = self.state.setdefault(group, _Group())
        rebalance, st.rebalance, st.seen_settled = st.rebalance, None, ts
        if rebalance is None:
            if st.generation is not None and decoded == st.members:
                return []
            static = _by_instance(decoded)
            if st.generation is not None and static is not None and static == _by_instance(st.members):
                return self._same_generation(group, st, decoded, None, ts)  # static members back under new ids
        out = self._generation(group, st, (st.generation or 0) + 1, protocol, None, decoded, None, ts)
        if rebalance is not None:
            first, last, before = rebalance
            out[-1]["rebalance_ms"] = ts - first
            out[-1]["rebalance_bounds_ms"] = [last - first, None if before is None else ts - before]
        return out

    def rebalancing(self, group: str, ts: int) -> None:
        """A DescribeGroups poll saw the classic group in PreparingRebalance or CompletingRebalance. The
        group's next `generation` event then carries `rebalance_ms`: from the first poll that saw it
        rebalancing to the first that saw it settled; and `rebalance_bounds_ms` [low, high]: the time the
        rebalance surely took (first to last poll that saw it rebalancing) and at most took (the poll before
        the first to the settled one; null when no earlier poll saw the group settled)."""
        st = self.state.setdefault(group, _Group())
        if st.rebalance is None:
            st.rebalance = (ts, ts, st.seen_settled)
        else:
            st.rebalance = (st.rebalance[0], ts, st.rebalance[2])

    def seed(self, events: Iterable[Event]) -> None:
        """Continue after events this translator wrote before (a restarted `--source describe` capture):
        the last generation, membership and partition counts told to each group."""
        for ev in events:
            kind, group = ev.get("type"), ev.get("group")
            if kind == "delete_group":
                self.state.pop(group, None)
            elif kind == "generation":
                st = self.state.setdefault(group, _Group())
                st.generation, st.members = ev["generation"], ev["members"]
            elif kind == "partitions":
                self.state.setdefault(group, _Group()).told.update(ev["partitions"])
            elif kind == "delete_topic" and group in self.state:
                self.state[group].told.pop(ev["topic"], None)

    def gone(self, group: str, ts: int) -> list[Event]:
        """A group that no longer exists (polling): `delete_group` if it was captured."""
        st = self.state.get(group)
        if st is not None and st.generation is None:  # only ever seen rebalancing: nothing was emitted
            del self.state[group]
            return []
        return self._delete(group, None, ts)

    def consumer_group(self, d: DescribedConsumerGroup, ts: int) -> list[Event]:
        """A ConsumerGroupDescribe snapshot of a KIP-848 group: a `generation` event when its assignment epoch
        is not the last one emitted, numbered by that epoch (a gap is epochs no poll saw). `assigned` is each
        member's target assignment - the assignor's decision at that epoch, complete at once, while current
        assignments converge to it member by member as revocations are acknowledged. `owned` is the target
        the member had at the epoch before (the assignor's input) when the previous event was that epoch,
        else what the member holds now, with its member epoch. `protocol` is the group's assignor."""
        st = self.state.setdefault(d.group_id, _Group())
        epoch = d.assignment_epoch
        if st.generation == epoch:
            return []
        previous = st.members if st.generation == epoch - 1 else None
        cluster = functools.cache(lambda: tuple(self.cluster_topics()))  # asked once, for regex subscriptions
        members: dict[str, dict[str, Any]] = {}
        for m in d.members:
            topics = self._subscription(m.subscribed_topic_names, m.subscribed_topic_regex, cluster)
            out: dict[str, Any] = {"topics": topics, "rack": m.rack_id, "instance_id": m.instance_id}
            if m.subscribed_topic_regex is not None:
                out["topic_regex"] = m.subscribed_topic_regex
            if previous is None:
                out["owned"] = self._assigned(st, m.assignment)
                out["owned_generation"] = m.member_epoch
            elif m.member_id in previous:
                out["owned"] = previous[m.member_id].get("assigned", {})
                out["owned_generation"] = epoch - 1
            out["assigned"] = self._assigned(st, m.target_assignment)
            out["client_id"] = m.client_id
            out["client_host"] = m.client_host
            members[m.member_id] = out
        protocol = SERVER_ASSIGNORS.get(d.assignor_name, d.assignor_name)
        return self._generation(d.group_id, st, epoch, protocol, None, members, None, ts)

    def _subscription(self, names: Iterable[str], regex: str | None,
                      cluster: Callable[[], Iterable[str]]) -> list[str]:
        """Subscribed topic names, then the cluster's topics a regex subscription matches in full (as the
        coordinator's RE2J `matches()`; Python's `re` reads the common syntax alike)."""
        topics = list(names)
        if regex is None:
            return topics
        try:
            pattern = re.compile(regex)
        except re.error:
            self.stats["unreadable_topic_regexes"] += 1
            return topics
        return topics + sorted(t for t in cluster() if t not in topics and pattern.fullmatch(t))

    def _assigned(self, st: _Group, partitions: Iterable[TopicAssignment]) -> dict[str, list[int]]:
        return _by_topic(tuple((t.topic_name or self._topic(st, t.topic_id), t.partitions) for t in partitions))

    # ---------------------------------------------------------------------------------- KIP-848 groups

    def _consumer_group(self, k: ConsumerGroupKey, v: Any, source: dict, timestamp: int) -> list[Event]:
        t = k.record_type
        if t == 3:
            if v is None:
                return self._delete(k.group, source, timestamp)
            self.state.setdefault(k.group, _Group())
            return []
        st = self.state.setdefault(k.group, _Group())
        if t == 4:
            st.topic_names = {} if v is None else {tm.topic_id: tm.name for tm in v.topics}
            st.counts = {} if v is None else {tm.name: tm.num_partitions for tm in v.topics}
        elif t == 5:
            self._put(st.cg_members, k.member, v)
        elif t == 7:
            self._put(st.targets, k.member, None if v is None else v.partitions)
        elif t == 8:
            self._put(st.current, k.member, v)
        elif t == 6 and v is not None:
            return self._epoch(k.group, st, v.assignment_epoch, source, timestamp)
        return []

    @staticmethod
    def _put(d: dict, member: str | None, v: Any) -> None:
        if v is None:
            d.pop(member, None)
        else:
            d[member] = v

    def _topic(self, st: _Group, topic_id: str) -> str:
        """A topic id's name: from the group's PartitionMetadata, else cluster metadata, else the id itself."""
        name = st.topic_names.get(topic_id) or self.topic_name(topic_id)
        if name is None:
            self.stats["unresolved_topic_ids"] += 1
            return topic_id
        return name

    def _names(self, st: _Group, partitions: TopicIdPartitions) -> dict[str, list[int]]:
        return _by_topic(tuple((self._topic(st, topic_id), parts) for topic_id, parts in partitions))

    def _epoch(self, group: str, st: _Group, epoch: int, source: dict, ts: int) -> list[Event]:
        members: dict[str, dict[str, Any]] = {}
        votes: Counter[str] = Counter()
        for mid, m in st.cg_members.items():
            out: dict[str, Any] = {"topics": list(m.subscribed_topic_names), "rack": m.rack_id,
                                   "instance_id": m.instance_id}
            cur = st.current.get(mid)
            if cur is not None:
                out["owned"] = self._names(st, cur.assigned_partitions + cur.partitions_pending_revocation)
                out["owned_generation"] = cur.member_epoch
            out["assigned"] = self._names(st, st.targets.get(mid, ()))
            out["client_id"] = m.client_id
            out["client_host"] = m.client_host
            members[mid] = out
            if m.server_assignor:
                votes[m.server_assignor] += 1
        # the coordinator uses the assignor most members prefer, else its default (ConsumerGroup
        # computePreferredServerAssignor: a stream max over a java.util.HashMap copy of the counts, so a tie
        # goes to the first of them in HashMap order)
        assignor = DEFAULT_SERVER_ASSIGNOR
        if votes:
            top = max(votes.values())
            assignor = next(a for a in hashmap_order(votes) if votes[a] == top)
        protocol = SERVER_ASSIGNORS.get(assignor, assignor)
        return self._generation(group, st, epoch, protocol, None, members, source, ts, st.counts)

    # --------------------------------------------------------------------------------------- metadata

    def metadata(self, counts: Mapping[str, int | None], ts: int) -> list[Event]:
        """Events for changed cluster metadata (`counts`: topic -> partitions, None = the topic is gone),
        to every captured group whose current members subscribe to or hold the topic."""
        out: list[Event] = []
        for group, st in self.state.items():
            if st.generation is None:
                continue
            topics = {t for m in st.members.values() for t in (*m["topics"], *m.get("assigned", ()))}
            changed = {t: n for t, n in counts.items() if t in topics and st.told.get(t) != n}
            grown = {t: n for t, n in changed.items() if n is not None and n >= 1}
            if grown:
                st.told.update(grown)
                out.append({"group": group, "type": "partitions", "partitions": grown, "ts": ts})
            for t, n in changed.items():
                if n is None and t in st.told:
                    del st.told[t]
                    out.append({"group": group, "type": "delete_topic", "topic": t, "ts": ts})
        return out

"""Step 1 of an event: validate it against the group and work out the group's next shape.

The shape is what the event says the group looks like next — topics and their partition counts, replica
racks, members in first-join order — plus what changed, which decides whether the strategies rebalance.
Judging the event here, before any assignment, means an invalid event changes nothing: `next_shape`
raises `InvalidEvent` and the old state stays as it was.
"""

from __future__ import annotations

from streaming.core.config import Limits
from streaming.core.events import (
    DeleteTopic,
    Event,
    Generation,
    InvalidEvent,
    Join,
    Leave,
    Metadata,
    Partitions,
    Subscribe,
)
from streaming.core.state_codec import GroupState, MemberState


class GroupShape:
    """The group after one event, before any assignment."""

    def __init__(self, topics: list[str], sizes: list[int], rack_names: list[str],
                 members: list[MemberState], carry: list[int | str | None]) -> None:
        self.topics = topics  # first-learnt order; a deleted topic keeps its place with size 0
        self.sizes = sizes
        self.rack_names = rack_names
        self.rack_updates: dict[int, list[list[str]]] = {}  # topic index -> replica racks per partition, as given
        self.members = members  # first-join order
        self.carry = carry  # per member: its old index, the departed id it returns as, or None (new)
        self.replaced: tuple[int, str] | None = None  # (index, old member id) of a static member's replacement
        self.membership_changed = False
        self.metadata_changed: set[int] = set()  # topic indices whose count or racks changed
        self._topic_index: dict[str, int] | None = None  # filled on first use (`topic_index`)

    @property
    def topic_index(self) -> dict[str, int]:
        """Topic name -> index into `topics`, made when an event names topics (most name members only)."""
        if self._topic_index is None:
            self._topic_index = {t: i for i, t in enumerate(self.topics)}
        return self._topic_index

    def subscribed_metadata_changed(self) -> bool:
        """Whether a topic somebody subscribes to changed (that rebalances the group; others do not)."""
        if not self.metadata_changed:
            return False
        changed = {self.topics[t] for t in self.metadata_changed}
        return any(not changed.isdisjoint(topics) for topics in {id(m.topics): m.topics for m in self.members}.values())


def next_shape(old: GroupState, ev: Event, limits: Limits) -> GroupShape:
    """The shape of `old` after `ev`; `InvalidEvent` when the event does not fit the group."""
    shape = GroupShape(list(old.topics), old.sizes.tolist(), list(old.rack_names), list(old.members),
                       list(range(len(old.members))))
    if isinstance(ev, Join):
        if ev.metadata is not None:
            _metadata(shape, ev.metadata, ev.group, limits)
        _join(shape, old, ev, limits)
    elif isinstance(ev, Leave):
        i = _known(shape, ev.member, "leave", ev.group)
        del shape.members[i], shape.carry[i]
        shape.membership_changed = True
    elif isinstance(ev, Subscribe):
        i = _known(shape, ev.member, "subscribe", ev.group)
        cur = shape.members[i]
        if cur.topics != ev.topics:
            shape.members[i] = MemberState(cur.id, ev.topics, cur.rack, cur.instance_id, cur.weight)
            shape.membership_changed = True
    elif isinstance(ev, Partitions):
        _metadata(shape, ev.metadata, ev.group, limits)
    elif isinstance(ev, Generation):
        _generation(shape, old, ev)
    elif isinstance(ev, DeleteTopic):
        deleted = shape.topic_index.get(ev.topic)
        if deleted is None or shape.sizes[deleted] == 0:
            raise InvalidEvent(f"delete_topic of unknown topic {ev.topic!r}", ev.group)
        shape.sizes[deleted] = 0
        shape.metadata_changed.add(deleted)
    return shape


def _metadata(shape: GroupShape, md: Metadata, group: str, limits: Limits) -> None:
    for topic, count in md.partitions.items():
        i = shape.topic_index.get(topic)
        if i is None:
            if len(shape.topics) >= limits.max_topics_per_group:
                raise InvalidEvent(f"group already knows {len(shape.topics)} topics, the limit "
                                   f"(max_topics_per_group)", group)
            shape.topic_index[topic] = len(shape.topics)
            shape.topics.append(topic)
            shape.sizes.append(0)
            i = len(shape.topics) - 1
        if count < shape.sizes[i]:
            raise InvalidEvent(f"field 'partitions.{topic}': topic cannot shrink from {shape.sizes[i]} to "
                               f"{count} partitions", group)
        if count != shape.sizes[i]:
            shape.sizes[i] = count
            shape.metadata_changed.add(i)
    total = sum(shape.sizes)
    if total > limits.max_partitions_per_group:
        raise InvalidEvent(f"group would have {total} partitions, above the limit of "
                           f"{limits.max_partitions_per_group}", group)
    known = set(shape.rack_names)
    for topic, rows in md.partition_racks.items():
        i = shape.topic_index.get(topic)
        if i is None or shape.sizes[i] == 0:
            raise InvalidEvent(f"field 'partition_racks.{topic}': topic has no partition count", group)
        if len(rows) > shape.sizes[i]:
            raise InvalidEvent(f"field 'partition_racks.{topic}': {len(rows)} entries for "
                               f"{shape.sizes[i]} partitions", group)
        for row in rows:
            for rack in row:
                if rack not in known:
                    if len(shape.rack_names) >= limits.max_racks_per_group:
                        raise InvalidEvent(f"field 'partition_racks.{topic}': more than "
                                           f"{limits.max_racks_per_group} distinct racks in the group", group)
                    known.add(rack)
                    shape.rack_names.append(rack)
        shape.rack_updates[i] = rows


def _member_index(shape: GroupShape, member: str) -> int | None:
    """The member's index, None when it is not in the group: a scan, which costs less than a dict of a group's
    members built per event."""
    for i, m in enumerate(shape.members):
        if m.id == member:
            return i
    return None


def _known(shape: GroupShape, member: str, what: str, group: str) -> int:
    i = _member_index(shape, member)
    if i is None:
        raise InvalidEvent(f"{what} of unknown member {member!r}", group)
    return i


def _join(shape: GroupShape, old: GroupState, ev: Join, limits: Limits) -> None:
    members = shape.members
    me = _member_index(shape, ev.member)
    holder = None
    if ev.instance_id is not None:
        holder = next((i for i, m in enumerate(members) if m.instance_id == ev.instance_id), None)
    if holder is not None and holder != me:
        if me is not None:
            raise InvalidEvent(f"instance_id {ev.instance_id!r} is held by member {members[holder].id!r} "
                               f"while member {ev.member!r} is in the group", ev.group)
        replaced = members[holder]
        members[holder] = MemberState(ev.member, replaced.topics, replaced.rack, replaced.instance_id, replaced.weight)
        shape.replaced = (holder, replaced.id)
        me = holder
    # members usually share subscriptions: keep one tuple object per distinct list (cheap caching by id)
    topics = ev.topics
    for m in members:
        if m.topics == topics:
            topics = m.topics
            break
    if me is None:
        if len(members) >= limits.max_members_per_group:
            raise InvalidEvent(f"group already has {len(members)} members, the limit "
                               f"(max_members_per_group)", ev.group)
        members.append(MemberState(ev.member, topics, ev.rack, ev.instance_id, ev.weight))
        shape.carry.append(ev.member if ev.member in old.departed else None)
        shape.membership_changed = True
        return
    cur = members[me]
    if cur.instance_id != ev.instance_id:
        raise InvalidEvent(_instance_change(ev.member, cur.instance_id, ev.instance_id), ev.group)
    if cur.topics != topics or cur.rack != ev.rack or cur.weight != ev.weight:
        members[me] = MemberState(cur.id, topics, ev.rack, cur.instance_id, ev.weight)
        shape.membership_changed = True


def _instance_change(member: str, held: str | None, given: str | None) -> str:
    """Why a rejoin may not change `group.instance.id`, in the member's terms."""
    if held is None:
        return (f"member {member!r} joined as a dynamic member (no instance_id); a rejoin cannot add "
                f"instance_id {given!r}: leave, then join with it")
    if given is None:
        return (f"member {member!r} is static (instance_id {held!r}); a rejoin without instance_id cannot make "
                "it dynamic: leave, then join without it")
    return (f"member {member!r} has instance_id {held!r}; a rejoin cannot change it to {given!r}: leave, then "
            "join with the new one")


def _generation(shape: GroupShape, old: GroupState, ev: Generation) -> None:
    """The membership becomes exactly the recorded one: members still there keep their place (first-join
    order) with the recorded subscription and rack, the others leave, new ones follow in record order; the
    group rebalances even when nothing changed, because the real group did."""
    recorded = {m.id: m for m in ev.members}
    members: list[MemberState] = []
    carry: list[int | str | None] = []

    def add(m: MemberState, came_from: int | str | None) -> None:
        topics = next((k.topics for k in members if k.topics == m.topics), m.topics)  # shared tuples, as `_join`
        members.append(MemberState(m.id, topics, m.rack, m.instance_id, m.weight))
        carry.append(came_from)

    for i, cur in enumerate(old.members):
        r = recorded.get(cur.id)
        if r is not None:
            add(MemberState(cur.id, r.topics, r.rack, r.instance_id, r.weight), i)
    kept = {m.id for m in members}
    for r in ev.members:
        if r.id not in kept:
            add(MemberState(r.id, r.topics, r.rack, r.instance_id, r.weight), r.id if r.id in old.departed else None)
    shape.members, shape.carry = members, carry
    shape.membership_changed = True

"""The fixture behind the ports of Kafka's sticky-family tests (AbstractStickyAssignorTest,
StickyAssignorTest, CooperativeStickyAssignorTest).

Kafka's tests talk to an assignor *instance* through `Subscription`s kept in a `HashMap`; our API
takes `Member`s in a given order. `StickyFixture` keeps Kafka's test vocabulary (subscriptions built
as protocol V0/V1/V2+, `partitionInfos`, `initializeRacks`, `verifyValidityAndBalance`, the
cooperative follow-up loop) and translates each call, so a ported test reads like the original:

* member order = the Java `HashMap` order of the test's `subscriptions` map (`JavaHashMap`), which is
  what the leader iterates [ORDER];
* `Member.owned/generation` = the assignor's `memberData(subscription)` (reference §3.1): eager
  `sticky` reads only userData (its partitions regrouped by topic in HashMap order, as
  `serializeTopicPartitionAssignment` writes them), `cooperative-sticky` reads ownedPartitions and the
  protocol generation, else the generation in its 4-byte userData;
* exact list order and `partitionsTransferringOwnership` come from `sticky_outcome` (the shared
  engine); the cooperative lists are that order restricted to what `CooperativeStickyAssignor`
  returns (Kafka's `adjustAssignment` removes transferring partitions with `List.remove`).

What our API cannot express (documented where a test depends on it): the memberData generation
differing from the protocol generation (only V0/V1 subscriptions; Kafka resolves ownership
conflicts with the earlier claimant's protocol generation), `maxGeneration` persisting across calls
on one assignor instance, duplicate topics in a subscription (we deduplicate), and the engine's
internal movement record behind `isSticky()` (see `assert_is_sticky`).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass

import numpy as np
from kafka_helpers import ALL_RACKS, DEFAULT_GENERATION, broker_racks, replica_racks

from assignors import Member, build_spec, get_assignor
from assignors.javaorder import hashmap_order, java_string_key
from assignors.sticky_engine.engine import run_engine

STICKY = "sticky"
COOPERATIVE = "cooperative-sticky"
STICKY_STRATEGIES = (STICKY, COOPERATIVE)

# AbstractStickyAssignorTest's fields
CONSUMER_ID = "consumer"
CONSUMER1, CONSUMER2, CONSUMER3, CONSUMER4 = "consumer1", "consumer2", "consumer3", "consumer4"
TOPIC, TOPIC1, TOPIC2, TOPIC3 = "topic", "topic1", "topic2", "topic3"
GENERATION_ID = 1

TP = tuple[str, int]
Assignment = dict[str, list[TP]]


@dataclass
class StickyOutcome:
    """The engine's result as Kafka's tests see it: per-member lists in Kafka's list order and
    `partitionsTransferringOwnership` (global id -> new owner index; None on the general path)."""

    assignment: list[np.ndarray]
    transferring: dict[int, int] | None


def sticky_outcome(spec, *, prefer_rack_aware: bool = False) -> StickyOutcome:
    """The shared sticky engine on `spec`, its transfer arrays as Kafka's map."""
    res = run_engine(spec, prefer_rack_aware=prefer_rack_aware)
    if res.transfer_ids is None:
        return StickyOutcome(res.assignment, None)
    moving = dict(zip(res.transfer_ids.tolist(), res.transfer_owners.tolist(), strict=True))
    return StickyOutcome(res.assignment, moving)


class RackConfig(enum.Enum):
    """`AbstractPartitionAssignorTest.RackConfig`."""

    NO_BROKER_RACK = "NO_BROKER_RACK"
    NO_CONSUMER_RACK = "NO_CONSUMER_RACK"
    BROKER_AND_CONSUMER_RACK = "BROKER_AND_CONSUMER_RACK"


class JavaHashMap(MutableMapping):
    """A dict iterated in `java.util.HashMap` order.

    The table only grows (`remove`/`clear` keep the capacity, as in Java), so the order of the
    remaining keys after removals is the one the Java test sees. Re-putting a key keeps its place.
    """

    def __init__(self, initial_capacity: int = 16) -> None:
        self._data: dict = {}
        self._capacity = 1
        while self._capacity < initial_capacity:
            self._capacity *= 2

    def __setitem__(self, key, value) -> None:
        if key not in self._data:
            while len(self._data) + 1 > 0.75 * self._capacity:
                self._capacity *= 2
        self._data[key] = value

    def __getitem__(self, key):
        return self._data[key]

    def __delitem__(self, key) -> None:
        del self._data[key]

    def __iter__(self) -> Iterator:
        return iter(hashmap_order(list(self._data), self._capacity))

    def __len__(self) -> int:
        return len(self._data)

    def remove(self, key) -> None:
        """Java's `Map.remove`: removing an absent key is a no-op."""
        self._data.pop(key, None)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {self._data[k]!r}" for k in self) + "}"


@dataclass(frozen=True)
class StickyUserData:
    """StickyAssignor userData V1 (V0: `generation` None): the partitions and generation it carries."""

    partitions: tuple[TP, ...]
    generation: int | None


@dataclass(frozen=True)
class Subscription:
    """`ConsumerPartitionAssignor.Subscription` as the tests build it.

    `user_data`: `StickyUserData` for eager sticky, an int generation for cooperative (its 4-byte
    userData), None for null userData. `generation_id` < 0 means absent (protocol < v2).
    """

    topics: tuple[str, ...]
    user_data: StickyUserData | int | None = None
    owned_partitions: tuple[TP, ...] = ()
    generation_id: int = DEFAULT_GENERATION
    rack: str | None = None


def userdata_order(partitions: Sequence[TP]) -> tuple[TP, ...]:
    """Partitions as StickyAssignor's userData returns them: grouped by topic, topics in HashMap order
    (`CollectionUtils.groupPartitionsByTopic`), partition order kept within a topic."""
    by_topic: dict[str, list[TP]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append((t, p))
    return tuple(tp for topic in hashmap_order(list(by_topic)) for tp in by_topic[topic])


def member_data(strategy: str, sub: Subscription) -> tuple[tuple[TP, ...], int | None]:
    """The assignor's `memberData(subscription)`: (owned partitions, generation or None if absent)."""
    if strategy == STICKY:
        if not isinstance(sub.user_data, StickyUserData):
            return (), None
        return userdata_order(sub.user_data.partitions), sub.user_data.generation
    if sub.generation_id >= 0:
        return sub.owned_partitions, sub.generation_id
    return sub.owned_partitions, sub.user_data if isinstance(sub.user_data, int) else None


def to_member(strategy: str, sub: Subscription) -> Member:
    partitions, generation = member_data(strategy, sub)
    return Member(
        topics=list(sub.topics),
        owned=list(partitions),
        generation=DEFAULT_GENERATION if generation is None else generation,
        rack=sub.rack,
    )


def set_prefer_rack_aware(assignor, prefer: bool) -> None:
    """`AbstractPartitionAssignorTest.preferRackAwareLogic(assignor, value)`."""
    assignor.prefer_rack_aware = prefer


def new_assignor(strategy: str, *, prefer_rack_aware: bool = False):
    """A fresh assignor instance with Kafka's test-only `preferRackAwareLogic` set as given."""
    assignor = get_assignor(strategy)
    set_prefer_rack_aware(assignor, prefer_rack_aware)
    return assignor


def global_to_tp(spec) -> list[TP]:
    """Global partition id -> (topic, partition) for one spec."""
    names = spec.topic_names
    return [
        (names[t], int(p)) for t, p in zip(spec.partition_topic.tolist(), spec.partition_number.tolist(), strict=True)
    ]


@dataclass
class Run:
    """One `assignPartitions` call: Kafka-ordered lists plus the engine's transfer map (None: general path)."""

    assignment: Assignment
    transferring: dict[TP, str] | None
    outcome: object


def run_sticky(
    strategy: str,
    topics: Mapping[str, int],
    members: Mapping[str, Member],
    partition_racks: Mapping[str, Sequence[Sequence[str | None]]] | None = None,
    *,
    prefer_rack_aware: bool = False,
) -> Run:
    """Run `strategy` on the inputs; lists in Kafka's order (see the module docstring)."""
    spec = build_spec(topics, members, partition_racks)
    outcome = sticky_outcome(spec, prefer_rack_aware=prefer_rack_aware)
    tps = global_to_tp(spec)
    eager = {
        mid: [tps[g] for g in np.asarray(ids).tolist()]
        for mid, ids in zip(spec.member_ids, outcome.assignment, strict=True)
    }
    assignor = new_assignor(strategy, prefer_rack_aware=prefer_rack_aware)
    result = spec.to_result(assignor.assign(spec))
    assignment: Assignment = {}
    for mid in spec.member_ids:
        got = set(result[mid])
        if strategy == STICKY:
            assert got == set(eager[mid]), f"{mid}: sticky result {result[mid]} != engine outcome {eager[mid]}"
            assignment[mid] = eager[mid]
        else:
            extra = got - set(eager[mid])
            assert not extra, f"{mid}: cooperative result has {sorted(extra)} beyond the engine's target"
            assignment[mid] = [tp for tp in eager[mid] if tp in got]
    transferring = None
    if outcome.transferring is not None:
        transferring = {tps[int(g)]: spec.member_ids[int(m)] for g, m in outcome.transferring.items()}
    return Run(assignment, transferring, outcome)


# --- Kafka's checks ------------------------------------------------------------------------------


def is_fully_balanced(assignment: Mapping[str, Sequence[TP]]) -> bool:
    """`isFullyBalanced` (§7.2): max - min size <= 1 over all members, empty ones included."""
    sizes = [len(parts) for parts in assignment.values()]
    return not sizes or max(sizes) - min(sizes) <= 1


def check_validity_and_balance(
    subscriptions: Mapping[str, Subscription], assignment: Mapping[str, Sequence[TP]]
) -> None:
    """AbstractStickyAssignorTest's `verifyValidityAndBalance` (§7.1): subscribed topics only, no partition
    twice, and members whose sizes differ by >= 2 hold no common topic."""
    assert len(subscriptions) == len(assignment)
    consumers = sorted(assignment, key=java_string_key)
    for i, consumer in enumerate(consumers):
        parts = assignment[consumer]
        for t, p in parts:
            assert t in subscriptions[consumer].topics, f"{t}-{p} is assigned to {consumer}, not subscribed to {t}"
        for other in consumers[i + 1 :]:
            other_parts = assignment[other]
            common = set(parts) & set(other_parts)
            assert not common, f"{consumer} and {other} have common partitions {sorted(common)}"
            if abs(len(parts) - len(other_parts)) <= 1:
                continue
            shared = {t for t, _ in parts} & {t for t, _ in other_parts}
            assert not shared, (
                f"partitions of {sorted(shared)} can move between {consumer} ({len(parts)}) and "
                f"{other} ({len(other_parts)}) for a better balance"
            )


def cooperative_revoked(subscriptions: Mapping[str, Subscription], assignment: Mapping[str, Sequence[TP]]) -> set[TP]:
    """CooperativeStickyAssignorTest's `verifyCooperativeValidity`: asserts no partition is added to one
    member while revoked from another in the same round; returns the revoked partitions."""
    added: set[TP] = set()
    revoked: set[TP] = set()
    for consumer, parts in assignment.items():
        owned = set(subscriptions[consumer].owned_partitions)
        revoked |= owned - set(parts)
        added |= set(parts) - owned
    both = added & revoked
    assert not both, f"partitions assigned to a new consumer in the round they are revoked: {sorted(both)}"
    return revoked


# --- the fixture --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Topic:
    """`List<PartitionInfo>`: one list of replica racks per partition (None: broker without a rack)."""

    replicas: tuple[tuple[str | None, ...], ...]

    def __len__(self) -> int:
        return len(self.replicas)


def empty_topic() -> Topic:
    """`Collections.emptyList()` metadata: the topic exists without partitions (no metadata)."""
    return Topic(())


class StickyFixture:
    """The state of one AbstractStickyAssignorTest instance (one test method) for one strategy."""

    generation_id = GENERATION_ID

    def __init__(self, strategy: str) -> None:
        self.strategy = strategy
        self.subscriptions: MutableMapping[str, Subscription] = JavaHashMap()
        self.num_broker_racks = 0
        self.has_consumer_rack = False
        self.replication_factor = 2
        self.prefer_rack_aware = False
        self._next_partition_index = 0
        self.transferring: dict[TP, str] | None = None  # assignor.partitionsTransferringOwnership
        self.last_outcome = None
        # the assignor instance's onAssignment memory, which subscriptionUserData() serialises
        self._assigned: tuple[TP, ...] | None = None
        self._assigned_generation = DEFAULT_GENERATION

    @property
    def cooperative(self) -> bool:
        return self.strategy == COOPERATIVE

    # rack helpers
    def initialize_racks(self, rack_config: RackConfig) -> None:
        self.replication_factor = 3
        self.num_broker_racks = 3 if rack_config != RackConfig.NO_BROKER_RACK else 0
        self.has_consumer_rack = rack_config != RackConfig.NO_CONSUMER_RACK
        self.prefer_rack_aware = True

    def partition_infos(self, topic: str, count: int) -> Topic:
        """`partitionInfos(topic, n)`: each call starts replicas one broker further."""
        index = self._next_partition_index
        self._next_partition_index += 1
        brokers = broker_racks(self.num_broker_racks, self.replication_factor)
        return Topic(tuple(tuple(r) for r in replica_racks(count, self.replication_factor, brokers, index)))

    def consumer_rack_id(self, consumer_index: int) -> str | None:
        num_racks = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        return ALL_RACKS[consumer_index % num_racks] if self.has_consumer_rack else None

    # the assignor's own userData
    def on_assignment(self, partitions: Sequence[TP] | None, generation: int) -> None:
        if partitions is not None:
            self._assigned = tuple(partitions)
        self._assigned_generation = generation

    def subscription_user_data(self) -> StickyUserData | int | None:
        if self.cooperative:
            return self._assigned_generation
        if self._assigned is None:
            return None
        return StickyUserData(self._assigned, self._assigned_generation)

    # subscription builders
    def subscription(self, topics: Sequence[str], consumer_index: int) -> Subscription:
        return Subscription(tuple(topics), None, (), DEFAULT_GENERATION, self.consumer_rack_id(consumer_index))

    def build_subscription_v0(self, topics, partitions, generation: int, consumer_index: int) -> Subscription | None:
        if self.cooperative:
            return None  # cooperative-sticky needs ConsumerProtocolSubscription V1+
        user_data = StickyUserData(tuple(partitions), generation)
        return Subscription(tuple(topics), user_data, (), DEFAULT_GENERATION, self.consumer_rack_id(consumer_index))

    def build_subscription_v1(self, topics, partitions, generation: int, consumer_index: int) -> Subscription:
        if self.cooperative:
            self.on_assignment(partitions, generation)
            user_data = self.subscription_user_data()
        else:
            user_data = StickyUserData(tuple(partitions), generation)
        return Subscription(tuple(topics), user_data, tuple(partitions), DEFAULT_GENERATION, None)

    def build_subscription_v2(self, topics, partitions, generation: int, consumer_index: int) -> Subscription:
        if self.cooperative:
            user_data = self.subscription_user_data()
            rack = self.consumer_rack_id(consumer_index)
        else:
            user_data = StickyUserData(tuple(partitions), generation)
            rack = None
        return Subscription(tuple(topics), user_data, tuple(partitions), generation, rack)

    def generate_user_data(self, topics, partitions, generation: int) -> StickyUserData | int | None:
        if self.cooperative:  # Kafka's cooperative override records the fixture's generationId, not `generation`
            self.on_assignment(partitions, self.generation_id)
            return self.subscription_user_data()
        return StickyUserData(tuple(partitions), generation)

    # assignment
    def assign_partitions(
        self, partitions_per_topic: Mapping[str, Topic], subscriptions: Mapping[str, Subscription] | None = None
    ) -> Assignment:
        """`assignor.assignPartitions(partitionsPerTopic, subscriptions)`; sets `self.transferring`."""
        subs = self.subscriptions if subscriptions is None else subscriptions
        topics = {t: len(info) for t, info in partitions_per_topic.items()}
        racks = {t: [list(r) for r in info.replicas] for t, info in partitions_per_topic.items() if len(info)}
        members = {mid: to_member(self.strategy, subs[mid]) for mid in subs}
        run = run_sticky(self.strategy, topics, members, racks, prefer_rack_aware=self.prefer_rack_aware)
        self.transferring = run.transferring
        self.last_outcome = run.outcome
        return run.assignment

    def verify_validity_and_balance(
        self,
        subscriptions: MutableMapping[str, Subscription],
        assignment: Assignment,
        partitions_per_topic: Mapping[str, Topic],
    ) -> None:
        """`verifyValidityAndBalance`; for cooperative first the override's follow-up rebalances (§7.3),
        which replace `assignment` (and the subscriptions) in place, as Kafka's does."""
        if self.cooperative:
            rebalances = 0
            while cooperative_revoked(subscriptions, assignment):
                for consumer, parts in list(assignment.items()):
                    old = subscriptions[consumer]
                    subscriptions[consumer] = Subscription(
                        old.topics, self.subscription_user_data(), tuple(parts), self.generation_id, old.rack
                    )
                new = self.assign_partitions(partitions_per_topic, subscriptions)
                assignment.clear()
                assignment.update(new)
                rebalances += 1
                assert rebalances <= 4, "more than 4 follow-up rebalances"
        check_validity_and_balance(subscriptions, assignment)


def topic_name(i: int, max_num: int) -> str:
    """`getTopicName(i, max)`: "t" + i zero-padded to the width of max."""
    return f"t{i:0{len(str(max_num))}d}"


def consumer_name(i: int, max_num: int) -> str:
    """`getConsumerName(i, max)`: "c" + i zero-padded to the width of max."""
    return f"c{i:0{len(str(max_num))}d}"


def assert_is_sticky(fx: StickyFixture) -> None:
    """`assertTrue(assignor.isSticky())`: the last computation recorded no topic with moves both X -> Y and
    Y -> X (§7.5). That record is internal to the engine; it is checked when the outcome exposes it as
    `is_sticky` (a bool or a method), and cannot be checked from the outside otherwise."""
    is_sticky = getattr(fx.last_outcome, "is_sticky", None)
    if callable(is_sticky):
        is_sticky = is_sticky()
    if is_sticky is not None:
        assert is_sticky, "the engine moved some partitions of a topic both X -> Y and Y -> X"

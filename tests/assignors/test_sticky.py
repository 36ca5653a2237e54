"""Kafka's StickyAssignorTest (the eager `sticky` strategy's own tests), expectations verbatim.

Source: apache/kafka clients/src/test/java/org/apache/kafka/clients/consumer/StickyAssignorTest.java.
The tests shared with cooperative-sticky are in test_sticky_common.py. StickyAssignor reads ownership
only from its userData; `StickyFixture` builds the V0/V1/V2+ subscriptions as Kafka's test does
(userData partitions + generation; V1/V2+ without a rack).
"""

from __future__ import annotations

import pytest
from kafka_helpers import tp
from sticky_harness import (
    CONSUMER1,
    CONSUMER2,
    CONSUMER3,
    GENERATION_ID,
    STICKY,
    TOPIC,
    TOPIC1,
    TOPIC2,
    TOPIC3,
    JavaHashMap,
    RackConfig,
    StickyFixture,
    StickyUserData,
    Subscription,
    is_fully_balanced,
    member_data,
)

tp0, tp1, tp2 = tp(TOPIC, 0), tp(TOPIC, 1), tp(TOPIC, 2)

with_rack_config = pytest.mark.parametrize("rack_config", list(RackConfig), ids=lambda c: c.name)
with_rack_and_subscriptions = pytest.mark.parametrize(
    ("rack_config", "all_subscriptions_equal"),
    [(config, equal) for equal in (True, False) for config in RackConfig],
    ids=lambda v: v.name if isinstance(v, RackConfig) else ("equal" if v else "not_equal"),
)


@pytest.fixture
def fx() -> StickyFixture:
    return StickyFixture(STICKY)


def _claimed_twice(fx, rack_config, num_partitions):
    fx.initialize_racks(rack_config)
    partitions_per_topic = JavaHashMap()
    partitions_per_topic[TOPIC] = fx.partition_infos(TOPIC, num_partitions)
    subs = fx.subscriptions
    subs[CONSUMER1] = fx.build_subscription_v2([TOPIC], [tp(TOPIC, 0), tp(TOPIC, 1)], GENERATION_ID, 0)
    subs[CONSUMER2] = fx.build_subscription_v2([TOPIC], [tp(TOPIC, 0), tp(TOPIC, 2)], GENERATION_ID, 1)
    subs[CONSUMER3] = fx.build_subscription_v2([TOPIC], [], GENERATION_ID, 2)
    return partitions_per_topic, fx.assign_partitions(partitions_per_topic)


@with_rack_config
def test_all_consumers_have_owned_partition_invalidated_when_claimed_by_multiple_consumers_in_same_generation_with_equal_partitions_per_consumer(  # noqa: E501
    fx, rack_config
):
    partitions_per_topic, assignment = _claimed_twice(fx, rack_config, 3)
    assert assignment[CONSUMER1] == [tp(TOPIC, 1)]
    assert assignment[CONSUMER2] == [tp(TOPIC, 2)]
    assert assignment[CONSUMER3] == [tp(TOPIC, 0)]

    fx.verify_validity_and_balance(fx.subscriptions, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)


@with_rack_config
def test_all_consumers_have_owned_partition_invalidated_when_claimed_by_multiple_consumers_in_same_generation_with_unequal_partitions_per_consumer(  # noqa: E501
    fx, rack_config
):
    partitions_per_topic, assignment = _claimed_twice(fx, rack_config, 4)
    assert assignment[CONSUMER1] == [tp(TOPIC, 1), tp(TOPIC, 3)]
    assert assignment[CONSUMER2] == [tp(TOPIC, 2)]
    assert assignment[CONSUMER3] == [tp(TOPIC, 0)]

    fx.verify_validity_and_balance(fx.subscriptions, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)


@with_rack_and_subscriptions
def test_assignment_with_multiple_generations1(fx, rack_config, all_subscriptions_equal):
    fx.initialize_racks(rack_config)
    all_topics = [TOPIC, TOPIC2]
    consumer2_topics = all_topics if all_subscriptions_equal else [TOPIC]
    partitions_per_topic = JavaHashMap()
    partitions_per_topic[TOPIC] = fx.partition_infos(TOPIC, 6)
    partitions_per_topic[TOPIC2] = fx.partition_infos(TOPIC2, 6)
    subs = fx.subscriptions
    subs[CONSUMER1] = fx.subscription(all_topics, 0)
    subs[CONSUMER2] = fx.subscription(consumer2_topics, 1)
    subs[CONSUMER3] = fx.subscription(all_topics, 2)

    assignment = fx.assign_partitions(partitions_per_topic)
    r1p1, r1p2, r1p3 = assignment[CONSUMER1], assignment[CONSUMER2], assignment[CONSUMER3]
    assert len(r1p1) == 4 and len(r1p2) == 4 and len(r1p3) == 4
    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)

    subs[CONSUMER1] = fx.build_subscription_v2(all_topics, r1p1, GENERATION_ID, 0)
    subs[CONSUMER2] = fx.build_subscription_v2(consumer2_topics, r1p2, GENERATION_ID, 1)
    subs.remove(CONSUMER3)

    assignment = fx.assign_partitions(partitions_per_topic)
    r2p1, r2p2 = assignment[CONSUMER1], assignment[CONSUMER2]
    assert len(r2p1) == 6 and len(r2p2) == 6
    if all_subscriptions_equal:  # only true when all subscriptions are equal
        assert set(r1p1) <= set(r2p1)
    assert set(r1p2) <= set(r2p2)
    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)
    assert set(r2p2) & set(r1p3)

    subs.remove(CONSUMER1)
    subs[CONSUMER2] = fx.build_subscription_v2(consumer2_topics, r2p2, 2, 1)
    subs[CONSUMER3] = fx.build_subscription_v2(all_topics, r1p3, 1, 2)

    assignment = fx.assign_partitions(partitions_per_topic)
    r3p2, r3p3 = assignment[CONSUMER2], assignment[CONSUMER3]
    assert len(r3p2) == 6 and len(r3p3) == 6
    assert not set(r3p2) & set(r3p3)
    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)


@with_rack_and_subscriptions
def test_assignment_with_multiple_generations2(fx, rack_config, all_subscriptions_equal):
    fx.initialize_racks(rack_config)
    all_topics = [TOPIC, TOPIC2, TOPIC3]
    consumer1_topics = all_topics if all_subscriptions_equal else [TOPIC]
    consumer3_topics = all_topics if all_subscriptions_equal else [TOPIC, TOPIC2]
    partitions_per_topic = JavaHashMap()
    for name in all_topics:
        partitions_per_topic[name] = fx.partition_infos(name, 4)
    subs = fx.subscriptions
    subs[CONSUMER1] = fx.subscription(consumer1_topics, 0)
    subs[CONSUMER2] = fx.subscription(all_topics, 1)
    subs[CONSUMER3] = fx.subscription(consumer3_topics, 2)

    assignment = fx.assign_partitions(partitions_per_topic)
    r1p1, r1p2, r1p3 = assignment[CONSUMER1], assignment[CONSUMER2], assignment[CONSUMER3]
    assert len(r1p1) == 4 and len(r1p2) == 4 and len(r1p3) == 4
    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)

    subs.remove(CONSUMER1)
    subs[CONSUMER2] = fx.build_subscription_v2(all_topics, r1p2, 1, 1)
    subs.remove(CONSUMER3)

    assignment = fx.assign_partitions(partitions_per_topic)
    r2p2 = assignment[CONSUMER2]
    assert len(r2p2) == 12
    assert set(r1p2) <= set(r2p2)
    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)

    subs[CONSUMER1] = fx.build_subscription_v2(consumer1_topics, r1p1, 1, 0)
    subs[CONSUMER2] = fx.build_subscription_v2(all_topics, r2p2, 2, 1)
    subs[CONSUMER3] = fx.build_subscription_v2(consumer3_topics, r1p3, 1, 2)

    assignment = fx.assign_partitions(partitions_per_topic)
    assert all(len(assignment[c]) == 4 for c in (CONSUMER1, CONSUMER2, CONSUMER3))
    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)


@with_rack_and_subscriptions
def test_assignment_with_conflicting_previous_generations(fx, rack_config, all_subscriptions_equal):
    fx.initialize_racks(rack_config)
    partitions_per_topic = JavaHashMap()
    for name in (TOPIC, TOPIC2, TOPIC3):
        partitions_per_topic[name] = fx.partition_infos(name, 4)
    all_topics = [TOPIC, TOPIC2, TOPIC3]
    consumer1_topics = all_topics if all_subscriptions_equal else [TOPIC]
    consumer2_topics = all_topics if all_subscriptions_equal else [TOPIC, TOPIC2]
    subs = fx.subscriptions
    subs[CONSUMER1] = fx.subscription(consumer1_topics, 0)
    subs[CONSUMER2] = fx.subscription(consumer2_topics, 1)
    subs[CONSUMER3] = fx.subscription(all_topics, 2)

    t1p0, t1p1, t1p2, t1p3 = (tp(TOPIC, p) for p in range(4))
    t2p0, t2p1, t2p2, t2p3 = (tp(TOPIC2, p) for p in range(4))
    t3p0, t3p1, t3p2, t3p3 = (tp(TOPIC3, p) for p in range(4))
    c1_before = [t1p0, t1p1, t1p2, t2p2, t2p3, t3p0] if all_subscriptions_equal else [t1p0, t1p1, t1p2, t1p3]
    c2_before = [t1p0, t1p1, t2p0, t2p1, t2p2, t2p3]
    c3_before = [t1p2, t1p3, t3p0, t3p1, t3p2, t3p3]
    subs[CONSUMER1] = fx.build_subscription_v2(consumer1_topics, c1_before, 1, 0)
    subs[CONSUMER2] = fx.build_subscription_v2(consumer2_topics, c2_before, 2, 1)
    subs[CONSUMER3] = fx.build_subscription_v2(all_topics, c3_before, 2, 2)

    assignment = fx.assign_partitions(partitions_per_topic)
    c1, c2, c3 = assignment[CONSUMER1], assignment[CONSUMER2], assignment[CONSUMER3]
    assert len(c1) == 4 and len(c2) == 4 and len(c3) == 4
    assert set(c2) <= set(c2_before)
    assert set(c3) <= set(c3_before)
    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)


@with_rack_config
def test_schema_backward_compatibility(fx, rack_config):
    fx.initialize_racks(rack_config)
    partitions_per_topic = JavaHashMap()
    partitions_per_topic[TOPIC] = fx.partition_infos(TOPIC, 3)
    subs = fx.subscriptions
    subs[CONSUMER1] = fx.subscription([TOPIC], 0)
    subs[CONSUMER2] = fx.subscription([TOPIC], 1)
    subs[CONSUMER3] = fx.subscription([TOPIC], 2)

    c1_before = [tp0, tp2]
    c2_before = [tp1]
    subs[CONSUMER1] = fx.build_subscription_v2([TOPIC], c1_before, 1, 0)
    # buildSubscriptionWithOldSchema: userData V0 (no generation), protocol v0 fields
    subs[CONSUMER2] = Subscription((TOPIC,), StickyUserData(tuple(c2_before), None), (), -1, fx.consumer_rack_id(1))

    assignment = fx.assign_partitions(partitions_per_topic)
    c1, c2, c3 = assignment[CONSUMER1], assignment[CONSUMER2], assignment[CONSUMER3]
    assert len(c1) == 1 and len(c2) == 1 and len(c3) == 1
    assert set(c1) <= set(c1_before)
    assert set(c2) <= set(c2_before)
    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)


@with_rack_config
def test_member_data_with_inconsistent_data(fx, rack_config):
    """StickyAssignor serialises what it was assigned into userData and always honours userData over
    ownedPartitions. (Decoding is the caller's job in our API; this pins the ports' decoding.)"""
    fx.initialize_racks(rack_config)
    owned_in_user_data = [tp1]
    owned_in_subscription = [tp0]
    fx.on_assignment(owned_in_user_data, GENERATION_ID)
    user_data = fx.subscription_user_data()

    subscription = Subscription((TOPIC,), user_data, tuple(owned_in_subscription))
    partitions, generation = member_data(STICKY, subscription)
    assert list(partitions) == owned_in_user_data
    assert generation == GENERATION_ID


def test_member_data_will_honor_user_data(fx):
    """With the eager protocol the userData wins, even over a protocol generation."""
    topics = [TOPIC]
    owned = [tp(TOPIC1, 0), tp(TOPIC2, 1)]
    generation_in_user_data = GENERATION_ID - 1
    subscription = Subscription(
        tuple(topics), fx.generate_user_data(topics, owned, generation_in_user_data), (), GENERATION_ID, None
    )
    partitions, generation = member_data(STICKY, subscription)
    assert list(partitions) == owned
    assert generation == generation_in_user_data


def test_assignor_with_old_version_subscriptions(fx):
    partitions_per_topic = JavaHashMap()
    partitions_per_topic[TOPIC1] = fx.partition_infos(TOPIC1, 3)
    subscribed = [TOPIC1]
    subs = fx.subscriptions
    subs[CONSUMER1] = fx.build_subscription_v0(subscribed, [tp(TOPIC1, 0)], GENERATION_ID, 0)
    subs[CONSUMER2] = fx.build_subscription_v1(subscribed, [tp(TOPIC1, 1)], GENERATION_ID, 1)
    subs[CONSUMER3] = fx.build_subscription_v2(subscribed, [], GENERATION_ID, 2)

    assignment = fx.assign_partitions(partitions_per_topic)
    assert assignment[CONSUMER1] == [tp(TOPIC1, 0)]
    assert assignment[CONSUMER2] == [tp(TOPIC1, 1)]
    assert assignment[CONSUMER3] == [tp(TOPIC1, 2)]

    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)

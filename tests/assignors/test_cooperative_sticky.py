"""Kafka's CooperativeStickyAssignorTest (the `cooperative-sticky` strategy's own tests), expectations
verbatim.

Source: apache/kafka clients/src/test/java/org/apache/kafka/clients/consumer/CooperativeStickyAssignorTest.java.
The shared tests are in test_sticky_common.py; the fixture's `verify_validity_and_balance` is this
class's override (no partition added and revoked in one round; follow-up rebalances with owned =
the current assignment, generation 1, at most 4).
"""

from __future__ import annotations

import pytest
from kafka_helpers import DEFAULT_GENERATION, tp
from sticky_harness import (
    CONSUMER1,
    CONSUMER2,
    CONSUMER3,
    COOPERATIVE,
    GENERATION_ID,
    TOPIC,
    TOPIC1,
    TOPIC2,
    JavaHashMap,
    RackConfig,
    StickyFixture,
    Subscription,
    is_fully_balanced,
    member_data,
)

tp0, tp1 = tp(TOPIC, 0), tp(TOPIC, 1)

with_rack_config = pytest.mark.parametrize("rack_config", list(RackConfig), ids=lambda c: c.name)


@pytest.fixture
def fx() -> StickyFixture:
    return StickyFixture(COOPERATIVE)


def test_encode_and_decode_generation(fx):
    """The 4-byte userData carries the assignor's generation, -1 before the first assignment."""
    subscription = Subscription((TOPIC,), fx.subscription_user_data())
    _, generation = member_data(COOPERATIVE, subscription)
    assert generation == DEFAULT_GENERATION

    fx.on_assignment(None, 10)
    subscription = Subscription((TOPIC,), fx.subscription_user_data())
    _, generation = member_data(COOPERATIVE, subscription)
    assert generation == 10


def test_decode_generation():
    """No userData and no protocol generation: the generation is absent."""
    _, generation = member_data(COOPERATIVE, Subscription((TOPIC,)))
    assert generation is None


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
    # topic-0 counts as owned: nobody gets it until both claimants have revoked it
    assert assignment[CONSUMER3] == []

    fx.verify_validity_and_balance(fx.subscriptions, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)


@with_rack_config
def test_all_consumers_have_owned_partition_invalidated_when_claimed_by_multiple_consumers_in_same_generation_with_unequal_partitions_per_consumer(  # noqa: E501
    fx, rack_config
):
    partitions_per_topic, assignment = _claimed_twice(fx, rack_config, 4)
    assert assignment[CONSUMER1] == [tp(TOPIC, 1), tp(TOPIC, 3)]
    assert assignment[CONSUMER2] == [tp(TOPIC, 2)]
    # topic-0 counts as owned: nobody gets it until both claimants have revoked it
    assert assignment[CONSUMER3] == []

    fx.verify_validity_and_balance(fx.subscriptions, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)


def test_member_data_with_inconsistent_data(fx):
    """Without a protocol generation, the generation comes from userData and the partitions from
    ownedPartitions (cooperative userData holds only the generation)."""
    owned_in_user_data = [tp1]
    owned_in_subscription = [tp0]
    fx.on_assignment(owned_in_user_data, GENERATION_ID)
    subscription = Subscription((TOPIC,), fx.subscription_user_data(), tuple(owned_in_subscription))

    partitions, generation = member_data(COOPERATIVE, subscription)
    assert list(partitions) == owned_in_subscription
    assert generation == GENERATION_ID


def test_member_data_with_empty_partitions_and_equal_generation(fx):
    """Empty ownedPartitions with a protocol generation win over userData (protocol v1+ only)."""
    topics = [TOPIC]
    owned = [tp(TOPIC1, 0), tp(TOPIC2, 1)]
    subscription = Subscription(
        tuple(topics), fx.generate_user_data(topics, owned, GENERATION_ID), (), GENERATION_ID, None
    )
    partitions, generation = member_data(COOPERATIVE, subscription)
    assert list(partitions) == []
    assert generation == GENERATION_ID


def test_member_data_with_empty_partitions_and_higher_generation(fx):
    topics = [TOPIC]
    owned = [tp(TOPIC1, 0), tp(TOPIC2, 1)]
    subscription = Subscription(
        tuple(topics), fx.generate_user_data(topics, owned, GENERATION_ID - 1), (), GENERATION_ID, None
    )
    partitions, generation = member_data(COOPERATIVE, subscription)
    assert list(partitions) == []
    assert generation == GENERATION_ID


def test_assignor_with_old_version_subscriptions(fx):
    partitions_per_topic = JavaHashMap()
    partitions_per_topic[TOPIC1] = fx.partition_infos(TOPIC1, 3)
    subscribed = [TOPIC1]
    subs = fx.subscriptions
    # cooperative-sticky supports ConsumerProtocolSubscription V1 and above only
    subs[CONSUMER1] = fx.build_subscription_v1(subscribed, [tp(TOPIC1, 0)], GENERATION_ID, 0)
    subs[CONSUMER2] = fx.build_subscription_v1(subscribed, [tp(TOPIC1, 1)], GENERATION_ID, 1)
    subs[CONSUMER3] = fx.build_subscription_v2(subscribed, [], GENERATION_ID, 2)

    assignment = fx.assign_partitions(partitions_per_topic)
    assert assignment[CONSUMER1] == [tp(TOPIC1, 0)]
    assert assignment[CONSUMER2] == [tp(TOPIC1, 1)]
    assert assignment[CONSUMER3] == [tp(TOPIC1, 2)]

    fx.verify_validity_and_balance(subs, assignment, partitions_per_topic)
    assert is_fully_balanced(assignment)


def test_uniform_subscription_transfer_ownership_list_is_right(fx):
    """KAFKA-15170: owned partitions dropped for a rack mismatch are transferring too. Rack logic is on
    without Kafka's test-only preference: partitions alternate between racks a and b (one replica)."""
    fx.replication_factor = 1
    fx.num_broker_racks = 2
    fx.has_consumer_rack = True
    partitions_per_topic = JavaHashMap()
    partitions_per_topic[TOPIC1] = fx.partition_infos(TOPIC1, 4)
    fx.subscriptions["c0"] = fx.build_subscription_v2([TOPIC1], [tp(TOPIC1, 0), tp(TOPIC1, 1)], GENERATION_ID, 0)
    fx.subscriptions["c1"] = fx.build_subscription_v2([TOPIC1], [tp(TOPIC1, 2), tp(TOPIC1, 3)], GENERATION_ID, 1)

    fx.assign_partitions(partitions_per_topic)
    assert len(fx.transferring) == 2

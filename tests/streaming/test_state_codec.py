"""The state blob: exact round trip, deterministic bytes, versioning, and size at the documented scale."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from streaming.core.state_codec import VERSION, DepartedMember, GroupState, MemberState, StrategyState, decode, encode


def sample_state(num_members: int = 5, sizes: tuple[int, ...] = (4, 0, 3), racks: bool = True) -> GroupState:
    rng = np.random.default_rng(1)
    total = sum(sizes)
    topics = [f"t{i}" for i in range(len(sizes))]
    members = [MemberState(f"m{i}", ("t0", "t2", "no-metadata") if i % 2 else ("t2",), "r1" if i % 3 else None,
                           f"i{i}" if i == 1 else None) for i in range(num_members)]
    strategies = {
        name: StrategyState(gen, rng.integers(-1, num_members, total).astype(np.int32),
                            rng.integers(-1, gen + 1, num_members).astype(np.int32))
        for name, gen in (("range", 7), ("cooperative-sticky", 12))
    }
    departed = {"gone": DepartedMember("gone", {"range": 3}, {"range": np.array([(0 << 32) | 2, (2 << 32) | 1])}),
                "gone2": DepartedMember("gone2", {"range": 1, "cooperative-sticky": -1},
                                        {"range": np.zeros(0, np.int64), "cooperative-sticky": np.array([5])})}
    return GroupState(
        topics=topics,
        sizes=np.array(sizes, dtype=np.int64),
        rack_names=["r1", "r2"] if racks else [],
        rack_bits=rng.integers(0, 4, total).astype(np.uint64) if racks else None,
        members=members,
        strategies=strategies,
        departed=departed,
    )


def assert_same(a: GroupState, b: GroupState) -> None:
    assert a.topics == b.topics
    np.testing.assert_array_equal(a.sizes, b.sizes)
    assert a.rack_names == b.rack_names
    if a.rack_bits is None:
        assert b.rack_bits is None
    else:
        np.testing.assert_array_equal(a.rack_bits, b.rack_bits)
    assert a.members == b.members
    assert list(a.strategies) == list(b.strategies)
    for name, s in a.strategies.items():
        assert s.generation == b.strategies[name].generation
        np.testing.assert_array_equal(s.owner, b.strategies[name].owner)
        np.testing.assert_array_equal(s.member_generation, b.strategies[name].member_generation)
    assert list(a.departed) == list(b.departed)
    for mid, d in a.departed.items():
        assert d.generations == b.departed[mid].generations
        assert list(d.owned) == list(b.departed[mid].owned)
        for k in d.owned:
            np.testing.assert_array_equal(d.owned[k], b.departed[mid].owned[k])


@pytest.mark.parametrize(("num_members", "racks"), [(0, True), (5, True), (5, False), (300, True), (70_000, False)])
def test_round_trip(num_members: int, racks: bool) -> None:  # uint8, uint16 and int32 owner encodings
    state = sample_state(num_members, racks=racks)
    blob = encode(state)
    assert blob[0] == VERSION
    back = decode(blob)
    assert_same(state, back)
    assert encode(back) == blob  # deterministic: equal states give equal bytes


def test_empty_state_round_trip() -> None:
    assert_same(GroupState(), decode(encode(GroupState())))


def test_members_share_subscription_tuples() -> None:
    back = decode(encode(sample_state(6)))
    assert back.members[1].topics is back.members[3].topics


def test_rejects_unknown_version_and_damage() -> None:
    blob = encode(sample_state())
    with pytest.raises(ValueError, match="unsupported version 99"):
        decode(bytes([99]) + blob[1:])
    with pytest.raises(ValueError, match="state blob"):
        decode(blob[:1] + b"garbage")
    with pytest.raises(ValueError, match="empty"):
        decode(b"")


def test_million_partitions_two_thousand_members_fit() -> None:
    """The documented scale: 1M partitions x 2000 members x 2 strategies stays a few MB."""
    rng = np.random.default_rng(7)
    sizes = np.full(1_000, 1_000, dtype=np.int64)
    topics = tuple(f"topic-{i:04d}" for i in range(1_000))
    members = [MemberState(f"consumer-{i}-0f8e2d6c-3b1a-4c5d-9e7f-{i:012d}", topics, f"az-{i % 3}", None)
               for i in range(2_000)]
    strategies = {}
    for name in ("sticky", "cooperative-sticky"):
        owner = rng.permutation(np.repeat(np.arange(2_000, dtype=np.int32), 500))  # worst case: no locality
        strategies[name] = StrategyState(40, owner, np.full(2_000, 40, dtype=np.int32))
    state = GroupState(topics=list(topics), sizes=sizes, rack_names=["az-0", "az-1", "az-2"],
                       rack_bits=rng.integers(1, 8, 1_000_000).astype(np.uint64), members=members,
                       strategies=strategies)
    blob = encode(state)
    assert len(blob) < 8_000_000
    assert_same(state, decode(blob))


def test_member_weights_round_trip_and_weight_one_keeps_the_old_bytes() -> None:
    plain = GroupState(members=[MemberState("a", ("t",)), MemberState("b", ("t",))])
    weighted = GroupState(members=[MemberState("a", ("t",)), MemberState("b", ("t",), weight=2.5)])
    assert [m.weight for m in decode(encode(weighted)).members] == [1.0, 2.5]
    assert b"\"b\",null,null]" in zlib.decompress(encode(plain)[1:])  # no weight entry at all

"""The state blob: exact round trip, deterministic bytes pinned to the format's, versioning, and size at the
documented scale."""

from __future__ import annotations

import hashlib
import json
import random
import struct
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


def random_state(rng: random.Random) -> GroupState:
    """A state with every feature the blob carries: deleted topics, subscriptions without metadata, racks (up to
    64, every rack dtype), instance ids, weights, non-ASCII ids, departed members, and member counts on both
    sides of the uint8/uint16 owner switch. Only `rng.random()` is used: its sequence is stable across
    Python versions, so the pinned digests below only move when the format does."""
    def below(n: int) -> int:
        return int(rng.random() * n)

    num_topics = below(4)
    sizes = [below(3) * below(9) for _ in range(num_topics)]  # some 0: deleted
    topics = [f"t{i}" if i % 3 else f"topic-é{i}" for i in range(num_topics)]
    names = [*topics, "no-metadata", "later"]
    subscriptions = [tuple(t for t in names if rng.random() < 0.5) for _ in range(1 + below(3))]
    num_members = below(25) if rng.random() < 0.8 else 250 + below(10)
    rack_names = [f"r{i}" for i in range(1 + below(64))] if rng.random() < 0.4 else []
    members = [MemberState(f"m{i}-ü" if i % 5 == 4 else f"m{i}", subscriptions[below(len(subscriptions))],
                           rack_names[below(len(rack_names))] if rack_names and rng.random() < 0.7 else None,
                           f"i{i}" if rng.random() < 0.2 else None, [1.0, 2.5, 0.5, 3.0][below(4)])
               for i in range(num_members)]
    total = sum(sizes)
    strategies = {name: StrategyState(below(40), np.array([below(num_members + 1) - 1 for _ in range(total)], np.int32),
                                      np.array([below(41) - 1 for _ in range(num_members)], np.int32))
                  for name in ("sticky", "cooperative-sticky", "observed")[:1 + below(3)]}
    departed = {}
    for j in range(below(4)):
        kept = [name for name in strategies if rng.random() < 0.8]
        departed[f"gone{j}"] = DepartedMember(
            f"gone{j}", {k: below(40) - 1 for k in kept},
            {k: np.array([below(num_topics + 1) << 32 | below(9) for _ in range(below(4))], np.int64) for k in kept})
    bits = [below(1 << min(len(rack_names), 62)) for _ in range(total)] if rack_names else None
    return GroupState(topics=topics, sizes=np.array(sizes, np.int64), rack_names=rack_names,
                      rack_bits=np.array(bits, np.uint64) if bits is not None else None, members=members,
                      strategies=strategies, departed=departed)


def assert_dtypes(state: GroupState) -> None:
    """What the state machine relies on: int64 sizes and departed keys, uint64 racks, int32 owners/generations."""
    assert state.sizes.dtype == np.int64
    assert state.rack_bits is None or state.rack_bits.dtype == np.uint64
    for s in state.strategies.values():
        assert (s.owner.dtype, s.member_generation.dtype) == (np.int32, np.int32)
        assert s.owner.flags.writeable and s.member_generation.flags.writeable
    for d in state.departed.values():
        assert all(keys.dtype == np.int64 for keys in d.owned.values())


# sha256 of the uncompressed payloads of random_state(Random(seed)) for seeds 0-59: any change of the blob format
# fails here
PINNED_RANDOM = "cfd4f815aa867e3fc1f08f6e673061436104a47d54cc300adb28e1a2392e73e3"
# payload sha256 of big_state(): int32 owners (>= 65535 members)
PINNED_BIG = "8bc7995c72ca73c6b9481bb2d23fbd0647c341734f8c778dd82d821391f47451"
# the blob of random_state(Random(24)) as an earlier encoder wrote it (racks, departed members, weights):
# checkpoints written by it stay readable
OLD_BLOB = (
    "0178016593cd6a1b3110c7953684d409b49794961a12448eb6b1be92ba149a5b1e62d982622b6171761dd6eb834972c8b9af905b4aa1"
    "efd04321873e4d2f85de3bf3d72aa95bc1cc4833f39b91c6eb8f4f85b894cdeca218cfe5bb2ceefaf75f87b2271b25f39eac7c1910aa"
    "66fd32347ee21bcffeda8fa7f0d79c5b2b569a95616559395607ac0e59bd653562a52202460152a01430054e0154201550055683d5b1"
    "1f580d5683d56035580d5683d5600d5803d6c4cb8235600d5803d68035600d580bd682b5606d7c29580bd682b5602d580bd68175601d"
    "5807d68175601d5807d68175600f863ced329427a1e67967b2a46ad5e2fc1c2aef91233e884ac26d06437863236e5168aa4179296325"
    "cdf6efbff18fc24fe000327125ba0532870307679c4cea9eda3c4c6a2537be3e55d06d8551db4bd18d919e02f18bd07ce582f7eca767"
    "cf9bda37e1acc01798d1b1184f97b2a70e39380917be6ec20443399b5581381a4f4a1ae59494490e50b7bf02ca5284785fd77e1947fa"
    "bea09b6a4ec7cec61d8dee71a7149c0b4a84f36a4155ff0bafd631797efd44c4956c7b14e94c7f40acf51420cbb1b5d626773aff6b53"
    "2efbc5f1879f47a7ddd7e2a673f3fd53e78db8fb7cfbe5d5af17e2779575ba3fbacfc4d6e61ea5ed90bc2479deca26d9ad56b6c9ee93"
    "ec92f0ddb83ec7b9fe06495ae84707b67f002538ea86"
)


def big_state() -> GroupState:
    n = 65_535
    topics = ("a", "b")
    members = [MemberState(f"m{i}", topics, None, None, 1.0 + (i % 3 == 0)) for i in range(n)]
    owner = (np.arange(2 * n, dtype=np.int32) * 7 % (n + 1) - 1).astype(np.int32)
    return GroupState(topics=list(topics), sizes=np.array([n, n], np.int64), members=members,
                      strategies={"sticky": StrategyState(3, owner, np.arange(n, dtype=np.int32) % 5 - 1)})


def payload(blob: bytes) -> bytes:
    assert blob[0] == VERSION
    body = zlib.decompress(blob[1:])
    assert blob == bytes([VERSION]) + zlib.compress(body, 1)  # the format's compression: zlib level 1
    return body


def test_random_states_keep_their_bytes_and_round_trip() -> None:
    digest = hashlib.sha256()
    for seed in range(60):
        state = random_state(random.Random(seed))
        blob = encode(state)
        digest.update(hashlib.sha256(payload(blob)).digest())
        back = decode(blob)
        assert_same(state, back)
        assert_dtypes(back)
        assert [m.weight for m in back.members] == [m.weight for m in state.members]
        assert encode(back) == blob
    assert digest.hexdigest() == PINNED_RANDOM


def test_unweighted_headers_are_the_json_encoders_bytes() -> None:
    """`encode` writes an unweighted state's header with orjson; the format is the json encoder's (compact,
    non-ASCII as is, its escapes), so both must give the same bytes, odd names included."""
    for seed in range(60):
        state = random_state(random.Random(seed))
        for i, m in enumerate(state.members):
            m.weight = 1.0
            if i % 4 == 1:
                m.id = f"m{i}\x00\x1f\"\\\n\t\x7f é€😀\u2028"
        body = payload(encode(state))
        (size,) = struct.unpack_from("<I", body)
        head = body[4:4 + size]
        assert head == json.dumps(json.loads(head), separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def test_int32_owner_state_keeps_its_bytes() -> None:
    state = big_state()
    blob = encode(state)
    assert hashlib.sha256(payload(blob)).hexdigest() == PINNED_BIG
    back = decode(blob)
    assert_same(state, back)
    assert_dtypes(back)


def test_a_blob_from_an_earlier_encoder_still_reads() -> None:
    blob = bytes.fromhex(OLD_BLOB)
    state = random_state(random.Random(24))
    assert_same(decode(blob), state)
    assert payload(encode(state)) == zlib.decompress(blob[1:])

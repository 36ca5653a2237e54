"""The shared data model: input validation (errors name the field), Java ordering rules, `MemberInfo`
order (Kafka's AbstractPartitionAssignorTest), and the KIP-881 predicate's truth table."""

from __future__ import annotations

import random

import numpy as np
import pytest

from assignors import Member, assign, build_spec
from assignors.javaorder import hashmap_order, java_string_hash, java_string_key
from assignors.model import rack_aware_enabled

# --- build_spec validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topics", "members", "racks", "field"),
    [
        ([("t", 1)], {}, None, "topics:"),
        ({1: 3}, {}, None, "topics:"),
        ({"t": "3"}, {}, None, "topics['t']:"),
        ({"t": True}, {}, None, "topics['t']:"),
        ({"t": -1}, {}, None, "topics['t']: partition count must be >= 0"),
        ({"t": 1}, [("c", Member(["t"]))], None, "members:"),
        ({"t": 1}, {5: Member(["t"])}, None, "members:"),
        ({"t": 1}, {"c": {"topics": ["t"]}}, None, "members['c']: expected a Member"),
        ({"t": 1}, {"c": Member("t")}, None, "members['c'].topics"),
        ({"t": 1}, {"c": Member(["t", 3])}, None, "members['c'].topics"),
        ({"t": 1}, {"c": Member(["t"], generation="1")}, None, "members['c'].generation"),
        ({"t": 1}, {"c": Member(["t"], generation=10**20)}, None, "members['c'].generation: 1000"),
        ({"t": 1}, {"c": Member(["t"], generation=-(2**31) - 1)}, None, "members['c'].generation: -2147483649 is"),
        ({"t": 2**31}, {}, None, "topics['t']: 2147483648 is outside"),
        ({"t\ud800": 1}, {}, None, "topics: 't\\ud800' contains an unpaired UTF-16 surrogate"),
        ({"t": 1}, {"c\udfff": Member(["t"])}, None, "members: 'c\\udfff' contains"),
        ({"t": 1}, {"c": Member(["t\ud800"])}, None, "members['c'].topics: "),
        ({"t": 1}, {"c": Member(["t"], rack="\ud800")}, None, "members['c'].rack: "),
        ({"t": 1}, {"c": Member(["t"], rack=1)}, None, "members['c'].rack"),
        ({"t": 1}, {"c": Member(["t"], instance_id=2)}, None, "members['c'].instance_id"),
        ({"t": 1}, {"c": Member(["t"], owned=5)}, None, "members['c'].owned:"),
        ({"t": 1}, {"c": Member(["t"], owned=[("t", 0), "t0"])}, None, "members['c'].owned[1]:"),
        ({"t": 1}, {"c": Member(["t"], owned=[("t", 0, 1)])}, None, "members['c'].owned[0]:"),
        ({"t": 1}, {"c": Member(["t"], owned=[(1, 0)])}, None, "members['c'].owned[0][0]"),
        ({"t": 1}, {"c": Member(["t"], owned=[("t", "0")])}, None, "members['c'].owned[0][1]"),
        ({"t": 1}, {"c": Member(["t"], owned=[("t", False)])}, None, "members['c'].owned[0][1]"),
        ({"t": 1}, {"c": Member(["t"], owned=[("t", 0), ("t", -1)])}, None, "members['c'].owned[1][1]: partition"),
        ({"t": 1}, {}, [["a"]], "partition_racks:"),
        ({"t": 1}, {}, {"t": "a"}, "partition_racks['t']:"),
        ({"t": 1}, {}, {"t": [["a"], ["b"]]}, "partition_racks['t']: 2 entries for 1 partitions"),
        ({"t": 1}, {}, {"t": ["a"]}, "partition_racks['t'][0]"),
        ({"t": 1}, {}, {"t": [[1]]}, "partition_racks['t'][0]"),
        ({"t": 2}, {}, {"t": [["a"], ["a", ["b"]]]}, "partition_racks['t'][1]"),
        ({"t": 1}, {}, {"t": [[f"r{i}" for i in range(65)]]}, "partition_racks['t'][0]: more than 64"),
    ],
)
def test_bad_input_raises_value_error_naming_the_field(topics, members, racks, field):
    with pytest.raises(ValueError) as err:
        build_spec(topics, members, racks)
    assert field in str(err.value)


def test_unknown_strategy_names_the_field():
    with pytest.raises(ValueError, match=r"^strategy: unknown strategy 'nope'"):
        assign("nope", {}, {})


def test_kafka_lenient_cases():
    """Topics with 0 partitions or without metadata are ignored; owned partitions outside the metadata are
    dropped; duplicates count once; an empty rack is no rack."""
    spec = build_spec(
        {"a": 2, "empty": 0, "b": 3},
        {
            "c1": Member(["b", "missing", "b", "empty"], owned=[("b", 2), ("missing", 0), ("a", 7), ("b", 2)]),
            "c2": Member([], rack=""),
        },
    )
    assert spec.topic_names == ["a", "b"]
    assert spec.subscriptions[0] == ("b", "missing", "empty")
    assert spec.member_topics[0].tolist() == [1]
    assert spec.owned[0].tolist() == [spec.partition_id("b", 2)]
    assert spec.racks == [None, None]


def test_owned_fast_and_checked_paths_agree():
    rng = random.Random(7)
    topics = {"x": 5, "y": 3}
    for _ in range(200):
        pairs = [(rng.choice(["x", "y", "z"]), rng.randint(0, 6)) for _ in range(rng.randint(0, 8))]
        expected = []
        for t, p in pairs:
            if t in topics and p < topics[t]:
                g = (0 if t == "x" else 5) + p
                if g not in expected:
                    expected.append(g)
        plain = build_spec(topics, {"m": Member(["x"], owned=pairs)}).owned[0].tolist()
        numpy_ints = build_spec(topics, {"m": Member(["x"], owned=[(t, np.int32(p)) for t, p in pairs])})
        assert plain == expected
        assert numpy_ints.owned[0].tolist() == expected


def test_owned_partition_beyond_int64_is_outside_the_metadata():
    spec = build_spec({"t": 2}, {"m": Member(["t"], owned=[("t", 2**70), ("t", 1)])})
    assert spec.owned[0].tolist() == [1]


def test_to_result_sorts_by_topic_name_then_partition_and_lists_every_member():
    spec = build_spec({"t2": 2, "t10": 2, "a": 1}, {"m1": Member([]), "m2": Member([])})
    ids = [
        np.array([spec.partition_id("t2", 1), spec.partition_id("a", 0), spec.partition_id("t10", 1)]),
        np.array([], dtype=np.int64),
    ]
    assert spec.to_result(ids) == {"m1": [("a", 0), ("t10", 1), ("t2", 1)], "m2": []}


# --- Java order ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "order"),
    [
        (["consumer1", "consumer2"], ["consumer2", "consumer1"]),
        (["consumer1", "consumer2", "consumer3"], ["consumer3", "consumer2", "consumer1"]),
        ([f"consumer{i}" for i in (1, 2, 3, 4)], ["consumer4", "consumer3", "consumer2", "consumer1"]),
        (["consumer0", "consumer1", "consumer2"], ["consumer2", "consumer1", "consumer0"]),
        (["c0", "c1"], ["c0", "c1"]),
    ],
)
def test_hashmap_order_reference_examples(keys, order):
    assert hashmap_order(keys) == order
    assert hashmap_order(list(reversed(keys))) == order


def test_hashmap_order_with_initial_capacity():
    """`new HashMap<>(3)` has 4 buckets: consumer0..2 land in buckets 1, 0, 3."""
    assert hashmap_order(["consumer0", "consumer1", "consumer2"], initial_capacity=3) == [
        "consumer1",
        "consumer0",
        "consumer2",
    ]


def test_java_string_hash_and_order():
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == -2147483648  # Integer.MIN_VALUE
    # UTF-16 code units: a supplementary character (surrogate 0xD83D...) sorts before U+FFFD in Java.
    assert sorted(["\ufffd", "\U0001f600"], key=java_string_key) == ["\U0001f600", "\ufffd"]


# --- MemberInfo order (AbstractPartitionAssignorTest) -----------------------------------------------------------


def member_order(members: list[tuple[str, str | None]]) -> list[str]:
    spec = build_spec({}, {mid: Member([], instance_id=iid) for mid, iid in members})
    return [spec.member_ids[i] for i in spec.member_info_order]


def test_member_info_sorting_without_group_instance_id():
    assert member_order([("a", None), ("b", None), ("c", None)]) == ["a", "b", "c"]


def test_member_info_sorting_with_all_group_instance_id():
    assert member_order([("a", "y"), ("b", "z"), ("c", "x")]) == ["c", "a", "b"]


def test_member_info_sorting_some_group_instance_id():
    assert member_order([("a", None), ("b", "y"), ("c", "x")]) == ["c", "b", "a"]


def test_merge_sort_many_member_info():
    rng = random.Random(3)
    infos = [(str(i + 100), str(i + 100) if rng.randrange(2) else None) for i in range(100)]
    expected = [m for m, iid in infos if iid is not None] + [m for m, iid in infos if iid is None]
    rng.shuffle(infos)
    assert member_order(infos) == expected


def test_topic_subscribers_in_member_info_order():
    spec = build_spec(
        {"t1": 1, "t2": 1, "t3": 1},
        {"b": Member(["t2", "t1"]), "a": Member(["t1"]), "s": Member(["t1", "t2"], instance_id="i")},
    )
    members, offsets = spec.topic_subscribers
    per_topic = [[spec.member_ids[m] for m in members[offsets[t] : offsets[t + 1]]] for t in range(3)]
    assert per_topic == [["s", "a", "b"], ["s", "b"], []]


# --- KIP-881 predicate (AbstractPartitionAssignorTest.testUseRackAwareAssignment) ---------------------------------


def predicate(consumer_racks: set[str], partition_racks: list[set[str]], prefer: bool) -> bool:
    """Evaluate `rack_aware_enabled` through a real spec: one member per consumer rack, one topic."""
    members = {f"m{i}": Member(["t"], rack=r) for i, r in enumerate(sorted(consumer_racks))}
    layout = {"t": [sorted(r) for r in partition_racks]}
    spec = build_spec({"t": max(len(partition_racks), 1)}, members, layout if partition_racks else None)
    return rack_aware_enabled(spec.member_rack_bit, spec.partition_rack_bits, prefer=prefer)


RACKS = ["a", "b", "c"]
ALL, TWO = set(RACKS), {"a", "b"}
ON_ALL = [ALL] * 10
ON_SUBSET = [{RACKS[i % 3]} for i in range(10)]


@pytest.mark.parametrize(
    ("consumers", "partitions", "default", "preferred"),
    [
        (set(), ON_ALL, False, False),
        (ALL, [], False, False),
        ({"d"}, ON_ALL, False, False),
        (ALL, ON_ALL, False, True),
        (TWO, ON_ALL, False, True),
        ({"a", "d"}, ON_ALL, False, True),
        (ALL, ON_SUBSET, True, True),
        (TWO, ON_SUBSET, True, True),
        ({"a", "d"}, ON_SUBSET, True, True),
        ({"d"}, ON_SUBSET, False, False),
    ],
)
def test_use_rack_aware_assignment_truth_table(consumers, partitions, default, preferred):
    assert predicate(consumers, partitions, prefer=False) is default
    assert predicate(consumers, partitions, prefer=True) is preferred


def test_predicate_ignores_racks_of_other_topics():
    """C ∩ P uses only the given partitions' racks: a consumer on rack a with a topic only on b/c is off."""
    spec = build_spec({"t": 2, "u": 1}, {"m": Member(["t"], rack="a")}, {"t": [["b"], ["c"]], "u": [["a"]]})
    assert not rack_aware_enabled(spec.member_rack_bit, spec.partition_rack_bits[:2])
    assert rack_aware_enabled(spec.member_rack_bit, spec.partition_rack_bits)


def test_reordered_spec_equals_a_spec_built_in_that_order():
    topics = {"a": 3, "b": 2}
    members = {
        "m1": Member(["a"], owned=[("a", 0)], generation=2, rack="r1", instance_id="i2"),
        "m2": Member(["a", "b"], owned=[("b", 1)], generation=1, rack="r2"),
        "m3": Member(["b"], instance_id="i1"),
    }
    racks = {"a": [["r1"], ["r2"], ["r1", "r2"]]}
    spec = build_spec(topics, members, racks)
    cached = ["partition_topic", "partition_number", "topics_by_name", "name_rank", "leader_order", "member_rack_bit",
              "member_info_order", "topic_subscribers", "small_subscribers", "round_results"]  # derived on first use
    for name in cached:
        getattr(spec, name)  # fill every cache, so that a stale copy would show
    order = np.array([2, 0, 1])
    other = spec.reordered(order)
    direct = build_spec(topics, {mid: members[mid] for mid in ("m3", "m1", "m2")}, racks)

    def plain(value):
        return [plain(v) for v in value] if isinstance(value, tuple) else np.asarray(value).tolist()

    for name in cached:
        assert plain(getattr(other, name)) == plain(getattr(direct, name)), name
    assert other.member_ids == direct.member_ids and other.racks == direct.racks
    assert all(np.array_equal(a, b) for a, b in zip(other.owned, direct.owned, strict=True))
    assert np.array_equal(other.generations, direct.generations)


def test_leader_order_is_the_hashmap_order_of_the_given_order():
    spec = build_spec({"t": 1}, {"c1": Member(["t"]), "c2": Member(["t"]), "c3": Member(["t"])})
    assert [spec.member_ids[i] for i in spec.leader_order] == ["c3", "c1", "c2"]


def test_hashmap_order_resizes_early_on_a_nine_long_bucket():
    # one-char ids hash to their code point: 17 + 64i share bucket 1 at capacity 16 and bucket 17 at 32;
    # the ninth of them makes Java's treeifyBin double the table (capacity < 64), which moves "\x02"
    # (bucket 2) in front of them although 10 keys do not pass the 0.75 load of 16
    colliding = [chr(17 + 64 * i) for i in range(9)]
    assert hashmap_order([*colliding, "\x02"]) == ["\x02", *colliding]
    assert hashmap_order([*colliding[:8], "\x02"]) == [*colliding[:8], "\x02"]


def test_ids_by_number_orders_by_partition_number_then_topic_name():
    spec = build_spec({"b": 3, "a": 1, "c": 2}, {"m": Member(["a", "b", "c"])})
    name_pos = {t: pos for pos, t in enumerate(spec.topics_by_name.tolist())}
    expected = sorted(range(spec.num_partitions),
                      key=lambda p: (int(spec.partition_number[p]), name_pos[int(spec.partition_topic[p])]))
    assert spec.ids_by_number == expected

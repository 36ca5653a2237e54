"""MetaQ balance strategies: ports of Metamorphosis' `DefaultStrategyUnitTest` and (the @Ignore'd,
assertion-light) `ConsistStrategyUnitTest`, plus ring results computed with an independent Java
transcription of `ConsisHashStrategy` (java.security.MessageDigest MD5, TreeMap.ceilingKey) on JDK 17.

MetaQ's tests name partitions "test-i"; our adaptation names them "0-i" (broker 0). For fewer than 11
partitions both sort the same way, so the expectations carry over unchanged."""

from __future__ import annotations

import hashlib
import random

from assignors import Member, assign
from assignors.metaq import _ring_points, ketama_hash


def consumers(n: int, topics: list[str] | None = None) -> dict[str, Member]:
    """`createConsumers(n)`: consumer-0 .. consumer-(n-1)."""
    return {f"consumer-{i}": Member(topics=topics or ["test"]) for i in range(n)}


def numbers(parts: list[tuple[str, int]]) -> list[int]:
    return [p for _, p in parts]


def test_default_4_consumers_10_partitions():
    result = assign("metaq-default", {"test": 10}, consumers(4))
    assert {m: numbers(p) for m, p in result.items()} == {
        "consumer-0": [0, 1, 2],
        "consumer-1": [3, 4, 5],
        "consumer-2": [6, 7],
        "consumer-3": [8, 9],
    }


def test_default_3_consumers_10_partitions():
    result = assign("metaq-default", {"test": 10}, consumers(3))
    assert {m: numbers(p) for m, p in result.items()} == {
        "consumer-0": [0, 1, 2, 3],
        "consumer-1": [4, 5, 6],
        "consumer-2": [7, 8, 9],
    }


def test_default_non_subscriber_gets_nothing():
    # MetaQ: "consumer-100" is not among the topic's consumers -> empty list.
    members = consumers(3) | {"consumer-100": Member(topics=["other"])}
    assert assign("metaq-default", {"test": 10, "other": 0}, members)["consumer-100"] == []


def test_default_slices_follow_string_order_of_partition_names():
    """MetaQ sorts "0-0", "0-1", "0-10", "0-11", "0-2", ... as strings before slicing."""
    result = assign("metaq-default", {"test": 12}, consumers(3))
    assert {m: numbers(p) for m, p in result.items()} == {
        "consumer-0": [0, 1, 10, 11],
        "consumer-1": [2, 3, 4, 5],
        "consumer-2": [6, 7, 8, 9],
    }


def test_default_consumers_sorted_as_java_strings_per_topic():
    members = {
        "b": Member(topics=["x", "y"]),
        "a": Member(topics=["y"]),
        "c": Member(topics=["x"]),
    }
    result = assign("metaq-default", {"x": 3, "y": 3}, members)
    assert result == {"a": [("y", 0), ("y", 1)], "b": [("x", 0), ("x", 1), ("y", 2)], "c": [("x", 2)]}


def test_ketama_hash_is_md5_little_endian():
    digest = hashlib.md5(b"0-7").digest()
    assert ketama_hash("0-7") == digest[0] | digest[1] << 8 | digest[2] << 16 | digest[3] << 24
    assert len(_ring_points("consumer-0")) == 160


# Expected rings: output of the Java transcription (`java Ring <n> <consumers...>`), partitions by name.
JAVA_RINGS = [
    (
        12,
        ["consumer-0", "consumer-1", "consumer-2"],
        {
            "consumer-0": ["0-4", "0-6", "0-7", "0-8"],
            "consumer-1": ["0-11", "0-9"],
            "consumer-2": ["0-0", "0-1", "0-10", "0-2", "0-3", "0-5"],
        },
    ),
    (
        30,
        ["c1", "c2", "c3", "c4", "c5"],
        {
            "c1": ["0-1", "0-14", "0-4", "0-6"],
            "c2": ["0-0", "0-11", "0-18", "0-19"],
            "c3": ["0-10", "0-12", "0-15", "0-16", "0-24", "0-28", "0-7", "0-8"],
            "c4": ["0-20", "0-21", "0-23", "0-26", "0-27", "0-29", "0-3"],
            "c5": ["0-13", "0-17", "0-2", "0-22", "0-25", "0-5", "0-9"],
        },
    ),
    (
        20,
        ["κόσμε", "consumer-α", "z"],
        {
            "consumer-α": ["0-12", "0-13", "0-14", "0-16", "0-17", "0-4", "0-5", "0-9"],
            "z": ["0-0", "0-1", "0-11", "0-2", "0-6"],
            "κόσμε": ["0-10", "0-15", "0-18", "0-19", "0-3", "0-7", "0-8"],
        },
    ),
]


def test_consistent_hash_matches_java_transcription():
    for n, names, expected in JAVA_RINGS:
        result = assign("metaq-consistent-hash", {"t": n}, {c: Member(topics=["t"]) for c in reversed(names)})
        assert {m: sorted(f"0-{p}" for _, p in parts) for m, parts in result.items()} == expected


def test_consistent_hash_only_moves_partitions_of_the_leaving_consumer():
    """The point of a hash ring: when a consumer leaves, only its partitions change owner."""
    members = consumers(6)
    before = assign("metaq-consistent-hash", {"test": 200}, members)
    del members["consumer-3"]
    after = assign("metaq-consistent-hash", {"test": 200}, members)
    for m, parts in after.items():
        assert set(before[m]) <= set(parts)


def test_both_strategies_assign_every_partition_once_to_subscribers():
    rng = random.Random(2)
    for strategy in ("metaq-default", "metaq-consistent-hash"):
        for _ in range(30):
            topics = {f"t{i}": rng.randint(1, 40) for i in range(rng.randint(1, 4))}
            members = {
                f"m{rng.randint(0, 999)}-{i}": Member(topics=rng.sample(list(topics), rng.randint(1, len(topics))))
                for i in range(rng.randint(1, 7))
            }
            result = assign(strategy, topics, members)
            seen = [tp for parts in result.values() for tp in parts]
            assert len(seen) == len(set(seen))
            subscribed = {t for m in members.values() for t in m.topics}
            assert set(seen) == {(t, p) for t in subscribed for p in range(topics[t])}
            for m, parts in result.items():
                assert {t for t, _ in parts} <= set(members[m].topics)

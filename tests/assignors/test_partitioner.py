"""Kafka's `UtilsTest.testMurmur2` vectors, the extra ones from reference §9.2, `toPositive` edge cases
and the producer's key -> partition choice."""

from __future__ import annotations

import pytest

from assignors.partitioner import DefaultPartitioner, murmur2, partition_for_key, to_positive

# UtilsTest.testMurmur2: inputs are the ASCII bytes of the strings.
KAFKA_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    bytes([ord("a"), ord("b"), ord("c")]): 479470107,
}
# Reference §9.2 extras (not from Kafka's tests; "wu" matches a value quoted in node-sinek issue #39).
EXTRA_VECTORS = {b"": 275646681, b"key": -1079937367, b"wu": 290249560}


@pytest.mark.parametrize(("data", "expected"), sorted({**KAFKA_VECTORS, **EXTRA_VECTORS}.items()))
def test_murmur2_vectors(data, expected):
    assert murmur2(data) == expected


def test_murmur2_is_signed_32_bit_and_reads_bytes_unsigned():
    # Every tail length (0-3) and bytes >= 0x80, which Java reads as negative before `& 0xff`.
    for n in range(12):
        h = murmur2(bytes(range(0x80, 0x80 + n)))
        assert -(2**31) <= h < 2**31
    assert murmur2(bytearray(b"foobar")) == murmur2(b"foobar") == murmur2(memoryview(b"foobar"))


def test_to_positive():
    assert to_positive(-1) == 2147483647
    assert to_positive(-(2**31)) == 0  # Integer.MIN_VALUE: not abs()
    assert to_positive(0) == 0
    assert to_positive(2147483647) == 2147483647
    assert to_positive(-973932308) == 1173551340


def test_partition_for_key():
    assert partition_for_key(b"key", 3) == 1
    assert partition_for_key(b"wu", 10) == 0
    assert partition_for_key(b"", 1) == 0
    for key, h in KAFKA_VECTORS.items():
        assert partition_for_key(key, 7) == (h & 0x7FFFFFFF) % 7


@pytest.mark.parametrize("bad", [0, -3])
def test_partition_for_key_rejects_bad_partition_counts(bad):
    with pytest.raises(ValueError, match="num_partitions"):
        partition_for_key(b"key", bad)


def test_bad_types_name_the_argument():
    with pytest.raises(ValueError, match="num_partitions"):
        partition_for_key(b"key", 2.0)
    with pytest.raises(ValueError, match="num_partitions"):
        partition_for_key(b"key", True)
    with pytest.raises(ValueError, match="key"):
        partition_for_key("key", 3)
    with pytest.raises(ValueError, match="data"):
        murmur2("foobar")
    with pytest.raises(ValueError, match="number"):
        to_positive(1.5)


# Kafka's DefaultPartitionerTest at 2.3.0 (the per-topic counter the founding document shows). Its cluster lists
# topic "test"'s partitions as 1 (no leader), 2, 0: the available ones, in metadata order, are [2, 0]. Java starts
# each counter at ThreadLocalRandom.nextInt(); the ports run from several starts, none crossing 0 or the 32-bit wrap
# within the test (toPositive breaks the cycle there: `test_counter_wraps_like_java_atomic_integer`).
KAFKA_TEST_STARTS = [0, 1, 7, -1_000, 123_456_789, -2_000_000_000]
TEST_PARTITIONS = 3
TEST_AVAILABLE = [2, 0]


@pytest.mark.parametrize("start", KAFKA_TEST_STARTS)
def test_kafka_key_partition_is_stable(start):
    partitioner = DefaultPartitioner(start)
    partition = partitioner.partition("test", b"key", TEST_PARTITIONS, TEST_AVAILABLE)
    assert partition == partitioner.partition("test", b"key", TEST_PARTITIONS, TEST_AVAILABLE)


@pytest.mark.parametrize("start", KAFKA_TEST_STARTS)
def test_kafka_round_robin_with_unavailable_partitions(start):
    partitioner = DefaultPartitioner(start)
    counts = {0: 0, 2: 0}
    for _ in range(100):
        part = partitioner.partition("test", None, TEST_PARTITIONS, TEST_AVAILABLE)
        assert part in (0, 2), "never a leader-less partition"
        counts[part] += 1
    assert counts[0] == counts[2], "even between the two available partitions"


@pytest.mark.parametrize("start", KAFKA_TEST_STARTS)
def test_kafka_round_robin(start):
    partitioner = DefaultPartitioner(start)
    counts: dict[int, int] = {}
    for i in range(30):
        partition = partitioner.partition("topicA", None, 3, [0, 1, 2])
        counts[partition] = counts.get(partition, 0) + 1
        if i % 5 == 0:  # another topic's null-key records do not disturb topicA's counter
            partitioner.partition("topicB", None, 1, [0])
    assert counts == {0: 10, 1: 10, 2: 10}


def test_null_key_sequence_over_available_partitions_in_metadata_order():
    partitioner = DefaultPartitioner(counter_start=0)
    assert [partitioner.partition("orders", None, 12, [0, 1, 3]) for _ in range(5)] == [0, 1, 3, 0, 1]
    assert [partitioner.partition("orders", None, 12, [3, 1]) for _ in range(2)] == [1, 3]  # values 5, 6


def test_counter_is_created_at_the_first_null_key_record_of_the_topic():
    partitioner = DefaultPartitioner(counter_start=4)
    assert partitioner.partition("a", b"key", 3) == 1  # keyed records do not touch the counter
    assert partitioner.partition("a", None, 10) == 4
    assert partitioner.partition("b", None, 10) == 4  # a counter of its own, from counter_start
    assert partitioner.partition("a", None, 10) == 5


def test_counter_wraps_like_java_atomic_integer():
    partitioner = DefaultPartitioner(counter_start=2_147_483_646)
    # 2147483646 % 3 = 0, 2147483647 % 3 = 1, then -2147483648 -> toPositive 0, -2147483647 -> 1
    assert [partitioner.partition("t", None, 3) for _ in range(4)] == [0, 1, 0, 1]


def test_keyed_records_hash_over_all_partitions_whatever_is_available():
    partitioner = DefaultPartitioner()
    assert partitioner.partition("t", b"key", 3, available=[0]) == partition_for_key(b"key", 3) == 1
    assert partitioner.partition("t", b"", 5, available=[]) == partition_for_key(b"", 5)


def test_no_available_partition_falls_back_to_all():
    partitioner = DefaultPartitioner(counter_start=-1)  # toPositive(-1) = 2147483647
    assert partitioner.partition("t", None, 5, available=[]) == 2147483647 % 5
    assert partitioner.partition("t", None, 5, available=[]) == 0  # the counter wrapped past -1 to 0


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"counter_start": 1.5}, "counter_start"),
    ({"counter_start": 1 << 31}, "counter_start"),
    ({"counter_start": True}, "counter_start"),
])
def test_bad_counter_start(kwargs, field):
    with pytest.raises(ValueError, match=field):
        DefaultPartitioner(**kwargs)


@pytest.mark.parametrize(("args", "field"), [
    (("t", None, 0), "num_partitions"),
    (("t", None, 3, [3]), "available"),
    (("t", None, 3, "01"), "available"),
    ((b"t", None, 3), "topic"),
    (("t", "key", 3), "key"),
])
def test_bad_partition_arguments(args, field):
    with pytest.raises(ValueError, match=field):
        DefaultPartitioner().partition(*args)

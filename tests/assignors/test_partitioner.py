"""Kafka's `UtilsTest.testMurmur2` vectors, the extra ones from reference §9.2, `toPositive` edge cases
and the producer's key -> partition choice."""

from __future__ import annotations

import pytest

from assignors.partitioner import murmur2, partition_for_key, to_positive

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

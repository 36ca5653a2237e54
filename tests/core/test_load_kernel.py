"""The load kernel (`streaming/core/load_kernel.pyx`) against its specs, side by side, bit for bit: the least and
most member of `traffic.member_rates`, and `cost.lag_added`'s fsum. Random rounds with ordinary rates, and rates
chosen to be hard: ties half-way between two doubles, subnormals, values far apart, -0.0. Where the kernel
declines (None) the spec answers; ordinary rates must not be declined."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from assignors.compiled import kernel
from streaming.core.cost import Paused
from streaming.core.traffic import member_rates

K = kernel("streaming.core.load_kernel")
pytestmark = pytest.mark.skipif(K is None, reason="the load kernel is not built (pure-Python run)")

HARD = [0.0, -0.0, 1.0, 2.0 ** -53, 2.0 ** -52, 1.0 + 2.0 ** -52, 3.0 * 2.0 ** -54, 5e-324, 2.2250738585072014e-308,
        1e-300, 0.1, 0.2, 0.3, 1e12, 1e12 - 1, 123.456, 2.0 ** 40, 2.0 ** 40 + 0.5, 7.0 / 3.0]


def _rate(rng: random.Random, hard: bool) -> float:
    if hard:
        return rng.choice(HARD)
    if rng.random() < 0.1:
        return 0.0
    return rng.choice((rng.uniform(0, 50_000), round(rng.uniform(0, 1_000), 2), rng.randint(0, 10_000) / 3))


def _round(rng: random.Random, hard: bool) -> tuple[np.ndarray, np.ndarray, int]:
    members = rng.randint(0, 12) if rng.random() < 0.95 else 300  # past the kernel's stack cells
    size = rng.randint(0, 40) if rng.random() < 0.9 else 600
    owner = np.array([rng.randint(-1, members - 1) for _ in range(size)], dtype=np.int32)
    rates = np.array([_rate(rng, hard) for _ in range(size)], dtype=np.float64)
    return owner, rates, members


def _bits(value: tuple[float, ...] | float) -> tuple[str, ...]:
    return tuple(float.hex(v) for v in (value if isinstance(value, tuple) else (value,)))


@pytest.mark.parametrize("seed", range(200))
def test_member_extremes_are_member_rates_extremes(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20):
        hard = rng.random() < 0.3
        owner, rates, members = _round(rng, hard)
        loads = member_rates(owner.tolist(), rates.tolist(), members)
        want = (min(loads), max(loads)) if loads else (0.0, 0.0)
        got = K.member_extremes(owner, rates, members)
        if got is None:
            assert hard, "declined ordinary rates"
        else:
            assert _bits(got) == _bits(want)


@pytest.mark.parametrize("seed", range(200))
def test_lag_added_is_the_fsum_of_the_paused_terms(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20):
        hard = rng.random() < 0.3
        before, rates, members = _round(rng, hard)
        after = None if rng.random() < 0.3 else np.array(
            [o if rng.random() < 0.6 else rng.randint(-1, members) for o in before.tolist()], dtype=np.int32)
        ms = float(rng.choice((3000, 2500, 2500.5, 1, 0, 10 ** 6 + 0.5)))
        paused = Paused(rates, before, after)
        want = math.fsum([rate * ms / 1000.0 for rate in paused.rates_list()])
        got = K.lag_added(rates, before, after, ms)
        if got is None:
            assert hard, "declined ordinary rates"
        else:
            assert _bits(got) == _bits(want)


def test_half_way_sums_round_to_even() -> None:
    """Sums exactly between two doubles round to the even one, and a tail below the last bit decides a tie."""
    one = np.zeros(3, dtype=np.int32)
    for terms in ([1.0, 2.0 ** -53], [1.0 + 2.0 ** -52, 2.0 ** -53], [1.0, 2.0 ** -53, 2.0 ** -60],
                  [2.0 ** 53, 1.0], [2.0 ** 53, 1.0, 2.0 ** -10]):
        rates = np.array(terms + [0.0] * (3 - len(terms)), dtype=np.float64)
        assert _bits(K.member_extremes(one, rates, 1)) == _bits((math.fsum(terms),) * 2)


def test_arrays_that_do_not_fit_are_left_to_the_spec() -> None:
    owner = np.array([0, 1, 2], dtype=np.int32)
    assert K.member_extremes(owner, np.ones(2), 3) is None  # rates shorter than the owners
    assert K.member_extremes(owner, np.ones(3), 2) is None  # an owner past the members
    assert K.lag_added(np.ones(3), owner, owner[:2], 1.0) is None
    assert K.member_extremes(owner, np.array([1.0, -1.0, 0.0]), 3) is None  # a negative rate
    assert K.member_extremes(owner, np.array([1.0, math.inf, 0.0]), 3) is None

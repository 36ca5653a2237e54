"""`rate-balanced` (docs/traffic.md): valid, deterministic, sticky, and within its proven bounds on random inputs."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from assignors import RATE_AWARE, STRATEGIES, Member, assign


def _loads(result, rates):
    return {m: math.fsum(rates[t][p] for t, p in parts) for m, parts in result.items()}


def _random_group(rng, *, members, topics, max_partitions, hot=True):
    sizes = {f"t{i}": rng.randint(1, max_partitions) for i in range(topics)}
    rates = {}
    for t, n in sizes.items():
        row = [rng.choice([0.0, round(rng.uniform(0, 100), 3), float(rng.randint(0, 1000))]) for _ in range(n)]
        if hot and rng.random() < 0.5:
            row[rng.randrange(n)] = rng.uniform(1_000, 10_000)  # a hot partition
        rates[t] = row
    names = [f"c-{rng.randint(0, 10**6)}-{i}" for i in range(members)]
    return sizes, rates, names


def _check_valid(result, sizes, subscriptions):
    held = [tp for parts in result.values() for tp in parts]
    assert len(held) == len(set(held)), "a partition given twice"
    everyone = {t for topics in subscriptions.values() for t in topics}
    assert set(held) == {(t, p) for t in everyone if t in sizes for p in range(sizes[t])}, "subscribed partitions"
    for m, parts in result.items():
        assert all(t in subscriptions[m] for t, _ in parts), "only subscribed topics"
        assert parts == sorted(parts)


def test_it_is_registered_and_rate_aware():
    assert "rate-balanced" in STRATEGIES
    assert {"rate-balanced"} == RATE_AWARE


@pytest.mark.parametrize("seed", range(40))
def test_identical_subscriptions_bound_validity_and_determinism(seed):
    """max load <= T/M + (1 - 1/M) * r_max whatever the members owned before (docs/traffic.md, bound 1)."""
    rng = random.Random(seed)
    m = rng.randint(1, 7)
    sizes, rates, names = _random_group(rng, members=m, topics=rng.randint(1, 3), max_partitions=12)
    everything = [(t, p) for t, n in sizes.items() for p in range(n)]
    owned = {name: [] for name in names}
    for tp in everything:  # random previous owners, some partitions claimed by nobody
        if rng.random() < 0.7:
            owned[rng.choice(names)].append(tp)
    members = {n: Member(list(sizes), owned=owned[n], generation=3) for n in names}
    result = assign("rate-balanced", sizes, members, partition_rates=rates)
    _check_valid(result, sizes, {n: list(sizes) for n in names})
    total = math.fsum(r for row in rates.values() for r in row)
    highest = max(r for row in rates.values() for r in row)
    bound = total / m + (1 - 1 / m) * highest
    assert max(_loads(result, rates).values()) <= bound * (1 + 1e-12) + 1e-9
    shuffled = dict(rng.sample(list(members.items()), m))  # the members' order does not matter
    assert assign("rate-balanced", sizes, shuffled, partition_rates=rates) == result


def _optimum(rates, m):
    """The least max load over every split of the partitions among m members (brute force)."""
    best = math.inf
    for split in itertools.product(range(m), repeat=len(rates)):
        loads = [0.0] * m
        for r, w in zip(rates, split, strict=True):
            loads[w] += r
        best = min(best, max(loads))
    return best


@pytest.mark.parametrize("seed", range(60))
def test_without_claims_it_is_lpt_within_four_thirds_of_the_optimum(seed):
    """Nobody owns anything: longest processing time first, max load <= (4/3 - 1/(3M)) OPT (bound 2)."""
    rng = random.Random(1000 + seed)
    m = rng.randint(2, 3)
    n = rng.randint(m + 1, 8)
    row = [float(rng.randint(1, 50)) for _ in range(n)]
    members = {f"c{i}": Member(["t"]) for i in range(m)}
    result = assign("rate-balanced", {"t": n}, members, partition_rates={"t": row})
    worst = max(_loads(result, {"t": row}).values())
    assert worst <= (4 / 3 - 1 / (3 * m)) * _optimum(row, m) + 1e-9


@pytest.mark.parametrize("seed", range(30))
def test_its_own_result_fed_back_moves_nothing(seed):
    rng = random.Random(2000 + seed)
    m = rng.randint(1, 6)
    sizes, rates, names = _random_group(rng, members=m, topics=2, max_partitions=10)
    members = {n: Member(list(sizes)) for n in names}
    first = assign("rate-balanced", sizes, members, partition_rates=rates)
    again = {n: Member(list(sizes), owned=first[n], generation=1) for n in names}
    assert assign("rate-balanced", sizes, again, partition_rates=rates) == first


def test_a_hot_partition_stays_with_its_owner_and_the_others_balance_around_it():
    members = {"a": Member(["t"], owned=[("t", 1), ("t", 2), ("t", 3)], generation=1),
               "b": Member(["t"], owned=[("t", 0)], generation=1)}
    rates = {"t": [100.0, 1.0, 1.0, 1.0]}
    assert assign("rate-balanced", {"t": 4}, members, partition_rates=rates) == {
        "a": [("t", 1), ("t", 2), ("t", 3)], "b": [("t", 0)]}
    # a member holding two hot partitions gives one up
    members = {"a": Member(["t"], owned=[("t", 0), ("t", 1)], generation=1), "b": Member(["t"])}
    result = assign("rate-balanced", {"t": 4}, members, partition_rates={"t": [100.0, 90.0, 1.0, 1.0]})
    assert result == {"a": [("t", 0)], "b": [("t", 1), ("t", 2), ("t", 3)]}


def test_a_new_member_takes_load_not_just_partitions():
    before = {"a": Member(["t"], owned=[("t", p) for p in range(6)], generation=1)}
    rates = {"t": [50.0, 50.0, 1.0, 1.0, 1.0, 1.0]}
    after = assign("rate-balanced", {"t": 6}, {**before, "b": Member(["t"])}, partition_rates=rates)
    # a keeps what fits the cap (52, the busiest member from scratch): a hot partition and two cold ones
    assert after == {"a": [("t", 0), ("t", 2), ("t", 3)], "b": [("t", 1), ("t", 4), ("t", 5)]}
    assert _loads(after, rates) == {"a": 52.0, "b": 52.0}


@pytest.mark.parametrize("seed", range(20))
def test_without_rates_it_balances_counts_stickily(seed):
    rng = random.Random(3000 + seed)
    m = rng.randint(1, 6)
    n = rng.randint(0, 20)
    owned = {f"c{i}": [] for i in range(m)}
    for p in range(n):
        owned[rng.choice(list(owned))].append(("t", p))
    members = {k: Member(["t"], owned=v, generation=1) for k, v in owned.items()}
    result = assign("rate-balanced", {"t": n} if n else {}, members)
    counts = [len(v) for v in result.values()]
    assert sum(counts) == n and max(counts) - min(counts) <= 1
    floor, extra = divmod(n, m)
    kept = {k: len(set(owned[k]) & set(result[k])) for k in owned}
    for k in owned:  # each keeps what it owned up to the floor of its share
        assert kept[k] >= min(len(owned[k]), floor)
    # and as many as any count-balanced assignment could keep: the fewest moves
    assert sum(kept.values()) == sum(min(len(v), floor) for v in owned.values()) + min(
        extra, sum(len(v) > floor for v in owned.values()))


@pytest.mark.parametrize("seed", range(20))
def test_heterogeneous_subscriptions_are_valid_and_deterministic(seed):
    rng = random.Random(4000 + seed)
    sizes, rates, names = _random_group(rng, members=rng.randint(1, 6), topics=3, max_partitions=8)
    subscriptions = {n: rng.sample(list(sizes), rng.randint(1, 3)) for n in names}
    members = {n: Member(subscriptions[n]) for n in names}
    result = assign("rate-balanced", sizes, members, partition_rates=rates)
    _check_valid(result, sizes, subscriptions)
    assert assign("rate-balanced", sizes, dict(reversed(members.items())), partition_rates=rates) == result


def test_kafka_strategies_ignore_rates():
    members = {"a": Member(["t"]), "b": Member(["t"])}
    assert assign("range", {"t": 4}, members, partition_rates={"t": [9.0, 0, 0, 0]}) == assign(
        "range", {"t": 4}, members)


@pytest.mark.parametrize(("rates", "field"), [
    ({"x": [1.0]}, "partition_rates['x']"),
    ({"t": [1.0]}, "partition_rates['t']: 1 rates for 2 partitions"),
    ({"t": [1.0, -1.0]}, r"partition_rates\['t'\]\[1\]"),
    ({"t": [1.0, math.nan]}, r"partition_rates\['t'\]\[1\]"),
    ({"t": "12"}, "partition_rates['t']"),
    ([1.0], "partition_rates"),
])
def test_bad_rates_name_the_entry(rates, field):
    with pytest.raises(ValueError, match=field if "\\" in field else field.replace("[", r"\[").replace("]", r"\]")):
        assign("rate-balanced", {"t": 2}, {"a": Member(["t"])}, partition_rates=rates)

"""A round's claims given as lists (`GroupSpec.for_round`'s `owned_lists`, what the streaming state machine hands
small rounds) or flagged disjoint give what the same claims as arrays give, for every strategy that reads them."""

from __future__ import annotations

import random

import numpy as np
import pytest

from assignors import OWNERSHIP_BLIND, STRATEGIES, KafkaAssignorError, Member, assign_owners, build_spec


def _members(rng: random.Random, topics: dict[str, int], disjoint: bool) -> dict[str, Member]:
    """A few members over `topics`, owning disjoint partitions (or, unless `disjoint`, some claimed twice)."""
    pairs = [(t, p) for t, n in topics.items() for p in range(n)]
    rng.shuffle(pairs)
    count = rng.randint(1, 6)
    owned: list[list[tuple[str, int]]] = [[] for _ in range(count)]
    for pair in pairs[: rng.randint(0, len(pairs))]:
        owned[rng.randrange(count)].append(pair)
        if not disjoint and rng.random() < 0.1:
            owned[rng.randrange(count)].append(pair)
    names = sorted(topics)
    generation = rng.randint(1, 3)
    return {f"m{i}": Member(rng.sample(names, rng.randint(1, len(names))), sorted(set(owned[i])),
                            generation if rng.random() < 0.8 else generation - 1) for i in range(count)}


def _owners(strategy: str, spec) -> np.ndarray | str:
    try:
        return assign_owners(strategy, spec)
    except KafkaAssignorError as err:
        return err.message


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s not in OWNERSHIP_BLIND])
@pytest.mark.parametrize("disjoint", [True, False])
def test_listed_claims_assign_like_arrays(strategy: str, disjoint: bool) -> None:
    rng = random.Random(f"{strategy} {disjoint}")
    for _ in range(150):
        topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 4))}
        members = _members(rng, topics, disjoint)
        expected = _owners(strategy, build_spec(topics, members))
        spec = build_spec(topics, members)  # its own member tables: no result remembered from the call above
        listed = spec.for_round(None, spec.generations, spec.owned_lists, disjoint)
        got = _owners(strategy, listed)
        assert isinstance(got, str) == isinstance(expected, str)
        assert got == expected if isinstance(got, str) else np.array_equal(got, expected)


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_named_claims_assign_like_unnamed_ones(strategy: str) -> None:
    """`for_round`'s `claims_key` (the caller's name for a round's claims, which the sticky engine may key
    remembered results by): rounds of one spec that repeat a name, that use another name for the same claims,
    or that repeat a name with the members' generations in another order each get the answer of the same
    claims without a name, on a spec of their own."""
    rng = random.Random(f"named claims {strategy}")
    for _ in range(50):
        topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 4))}
        members = _members(rng, topics, True)
        spec = build_spec(topics, members)
        reordered = list(reversed(spec.generation_list))
        for name, generations in [("a", spec.generations), ("a", spec.generations), ("b", spec.generations),
                                  ("a", reordered)]:
            named = spec.for_round(None, generations, spec.owned_lists, True, name)
            fresh = build_spec(topics, members)
            unnamed = fresh.for_round(None, generations, fresh.owned_lists, True)
            got, expected = _owners(strategy, named), _owners(strategy, unnamed)
            assert isinstance(got, str) == isinstance(expected, str)
            assert got == expected if isinstance(got, str) else np.array_equal(got, expected)

"""`assign()`'s cheap path (`assignors.intake`): plain input of a small group gives exactly what the full
validation's route gives, and anything else still goes the long way (bad input: a ValueError naming the field).
The long route is reached through the public API by handing the same input as read-only mappings, which are
valid input but not plain."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from hypothesis import given

from assignors import STRATEGIES, KafkaAssignorError, Member, assign, pairs
from assignors.intake import plain_spec
from tests.assignors.test_properties import ROUND_SETTINGS, groups


def outcome(strategy, topics, members, racks=None):
    try:
        return assign(strategy, topics, members, racks)
    except KafkaAssignorError as err:
        return err.exception, err.message


def long_route(strategy, topics, members, racks=None):
    """The same call through the full validation (`build_spec`): read-only mappings are not plain."""
    return outcome(strategy, MappingProxyType(topics), MappingProxyType(members), racks)


@pytest.mark.parametrize("strategy", STRATEGIES)
@ROUND_SETTINGS
@given(group=groups())
def test_plain_input_assigns_as_the_full_validation_does(strategy, group):
    topics, members, racks = group
    assert outcome(strategy, topics, members, racks) == long_route(strategy, topics, members, racks)
    pairs.clear()  # and from a cold tuple cache
    assert outcome(strategy, topics, members, racks) == long_route(strategy, topics, members, racks)


def small_group(owned: bool = True) -> tuple[dict[str, int], dict[str, Member]]:
    """10 members on 3 topics of 12 partitions, each owning what a fresh range assignment gives it."""
    topics = {f"t{i}": 12 for i in range(3)}
    fresh = assign("range", topics, {f"c{i:02d}": Member(["t0", "t1", "t2"]) for i in range(10)})
    return topics, {m: Member(["t0", "t1", "t2"], [(t, p) for t, p in tps] if owned else [], 1)
                    for m, tps in fresh.items()}


def test_a_group_of_plain_input_takes_the_cheap_path():
    topics, members = small_group()
    spec = plain_spec(topics, members)
    assert spec is not None
    assert spec.owned_lists == [[spec.partition_id(t, p) for t, p in m.owned] for m in members.values()]
    assert spec.owned_disjoint and spec.generation_list == [1] * 10
    for strategy in ("range", "roundrobin", "sticky", "cooperative-sticky"):
        for leave, join in (("c05", None), (None, "c10")):
            group = {m: v for m, v in members.items() if m != leave}
            if join:
                group[join] = Member(["t0", "t1", "t2"])
            assert outcome(strategy, topics, group) == long_route(strategy, topics, group)


@pytest.mark.parametrize(
    "change",
    [
        lambda topics, members: topics.update({"empty": 0}),  # a topic without partitions
        lambda topics, members: topics.update({"big": 600}),  # past a small group
        lambda topics, members: topics.update({"tö": 2}),  # not ASCII (valid)
        lambda topics, members: members.update({"cö": Member(["t0"])}),
        lambda topics, members: members.update({"c00": Member(["t0"], [("t0", 12)], 1)}),  # past the partitions
        lambda topics, members: members.update({"c00": Member(["t0"], [["t0", 0]], 1)}),  # a list as a pair
        lambda topics, members: members.update({"c00": Member(["t0"], {("t0", 0)}, 1)}),  # a set of pairs
        lambda topics, members: members.update({"c00": Member(["t0"], weight=2)}),
        lambda topics, members: members.update({"c00": Member(["t0"], weight=1.0)}),
        lambda topics, members: members.update({"c00": Member(["t0"], rack="rö")}),
        lambda topics, members: members.update({"c00": Member(("t0", "ghöst"))}),
        lambda topics, members: members.update({"c00": Member(["t0"], [("ghöst", 0)])}),
    ],
)
def test_valid_input_that_is_not_plain_goes_the_long_way(change):
    topics, members = small_group()
    change(topics, members)
    assert plain_spec(topics, members) is None
    for strategy in STRATEGIES:
        assert outcome(strategy, topics, members) == long_route(strategy, topics, members)


@pytest.mark.parametrize(
    ("member", "field"),
    [
        (Member(["t0"], generation=True), "members['c00'].generation"),
        (Member(["t0"], generation=2**31), "members['c00'].generation: 2147483648 is outside"),
        (Member(["t0"], owned=[("t0", True)]), "members['c00'].owned[0][1]"),
        (Member(["t0"], owned=[("t0", -1)]), "members['c00'].owned[0][1]: partition"),
        (Member(["t0"], owned=[("t0", 0), ("t0", 1, 2)]), "members['c00'].owned[1]:"),
        (Member(["t0"], owned=[(b"t0", 0)]), "members['c00'].owned[0][0]"),
        (Member(["t0", "\udfff"]), "members['c00'].topics"),
        (Member(["t0"], instance_id=7), "members['c00'].instance_id"),
        (Member(["t0"], weight=0), "members['c00'].weight"),
    ],
)
def test_bad_input_still_names_the_field(member, field):
    topics, members = small_group()
    members["c00"] = member
    assert plain_spec(topics, members) is None
    with pytest.raises(ValueError) as err:
        assign("sticky", topics, members)
    assert field in str(err.value)

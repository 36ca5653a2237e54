"""The bundled sample histories: reproducible from the generator, and each has the property it claims."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from whatif.histories import HISTORIES, main, sample_path


def events(name: str) -> list[dict]:
    with sample_path(name).open() as f:
        return [json.loads(line) for line in f]


def membership(evs: list[dict]) -> list[int]:
    """Group size after each membership event (a join with a held instance id replaces, not adds)."""
    members: dict[str, str | None] = {}
    sizes = []
    for e in evs:
        if e["type"] == "join":
            holder = next((m for m, i in members.items() if i is not None and i == e.get("instance_id")), None)
            members.pop(holder, None)
            members[e["member"]] = e.get("instance_id")
        elif e["type"] == "leave":
            if e["member"] not in members:  # a repeated leave: rejected by the service, changes nothing
                continue
            del members[e["member"]]
        else:
            continue
        sizes.append(len(members))
    return sizes


def test_regenerating_gives_byte_identical_files(tmp_path):
    main(["--out", str(tmp_path)])
    for name in HISTORIES:
        assert (tmp_path / f"{name}.jsonl").read_bytes() == sample_path(name).read_bytes(), name


@pytest.mark.parametrize("name", list(HISTORIES))
def test_files_are_valid_time_ordered_and_small(name):
    assert sample_path(name).stat().st_size < 2_000_000
    evs = events(name)
    assert len({e["group"] for e in evs}) == 1
    ts = [e["ts"] for e in evs]
    assert ts == sorted(ts) and len(set(ts)) == len(ts)
    assert all(isinstance(t, int) and t > 1_600_000_000_000 for t in ts)
    assert {e["type"] for e in evs} <= {"join", "leave", "subscribe", "partitions", "delete_topic", "traffic"}


def test_rolling_deploy_replaces_twelve_members_one_by_one():
    evs = events("rolling-deploy")
    sizes = membership(evs)
    assert sizes[:12] == list(range(1, 13))
    assert sizes[12:] == [11, 12] * 12  # one member down at a time, then back to 12
    first = [e["member"] for e in evs if e["type"] == "join"][:12]
    assert [e["member"] for e in evs if e["type"] == "leave"] == first


def test_autoscaling_goes_4_16_4():
    sizes = membership(events("autoscaling"))
    assert sizes[3] == 4 and max(sizes) == 16 and sizes[-1] == 4
    peak = sizes.index(16)
    assert sizes[3:peak + 1] == list(range(4, 17)) and sizes[peak:] == list(range(16, 3, -1))


def test_flapping_member_causes_a_storm():
    evs = events("flapping-member")
    joins = Counter(e["member"].rsplit("-", 5)[0] for e in evs if e["type"] == "join")
    assert joins["scorer-7"] == 13 and all(n == 1 for c, n in joins.items() if c != "scorer-7")
    storm = [e["ts"] for e in evs if e["type"] in ("join", "leave")][8:]
    assert len(storm) == 26 and storm[-1] - storm[0] < 20 * 60_000  # 24 membership changes within 20 minutes
    leaves = [e["member"] for e in evs if e["type"] == "leave"]
    assert len(leaves) == 14 and len(set(leaves)) == 12  # two leaves recorded twice (the member's own LeaveGroup)


def test_topic_grows_from_6_to_24():
    counts = [e["partitions"]["inventory-updates"] for e in events("topic-growth") if e["type"] == "partitions"]
    assert counts == [6, 12, 18, 24]


def test_static_members_restart_with_the_same_instance_ids():
    evs = events("static-restarts")
    assert not [e for e in evs if e["type"] == "leave"]
    joins = [e for e in evs if e["type"] == "join"]
    assert all(e.get("instance_id") for e in joins)
    assert Counter(e["instance_id"] for e in joins) == {f"ledger-writer-{i}": 3 for i in range(6)}
    assert len({e["member"] for e in joins}) == 18  # every restart is a new member id
    assert membership(evs)[-1] == 6


def test_rack_aware_group_has_partial_replica_placement():
    evs = events("rack-aware")
    racks = {e["rack"] for e in evs if e["type"] == "join"}
    assert racks == {"az-a", "az-b", "az-c"}
    placement = next(e for e in evs if e["type"] == "partitions")["partition_racks"]
    replicas = [set(r) for per_topic in placement.values() for r in per_topic]
    assert all(len(r) == 2 and r < racks for r in replicas)  # every partition misses one rack
    assert min(membership(evs)) >= 1 and membership(evs)[-1] == 9


def test_mixed_subscriptions():
    evs = events("mixed-subscriptions")
    subscriptions = {tuple(sorted(e["topics"])) for e in evs if e["type"] in ("join", "subscribe")}
    assert len(subscriptions) >= 5
    assert any(e["type"] == "subscribe" for e in evs)


def test_large_group_dimensions():
    evs = events("large-group")
    metadata = next(e for e in evs if e["type"] == "partitions")["partitions"]
    assert len(metadata) == 200 and set(metadata.values()) == {500}
    assert max(membership(evs)) == 500


@pytest.mark.parametrize("name", list(HISTORIES))
def test_only_the_repeated_leaves_are_dead_letters(name, history_dead_letters):
    """Every event is valid but the flapping member's two repeated leaves (as a real capture has them)."""
    dead = history_dead_letters(name)
    if name != "flapping-member":
        assert dead == []
        return
    repeated = [n for n, e in enumerate(events(name), 1) if e["type"] == "leave"
                and [x["member"] for x in events(name)[:n - 1] if x["type"] == "leave"].count(e["member"])]
    assert [d["source"]["line"] for d in dead] == repeated and len(repeated) == 2
    assert all(d["reason"].startswith("leave of unknown member") for d in dead)


def rebalances_by_strategy(records: list[dict]) -> dict[str, list[dict]]:
    """The first round of every rebalance (follow-ups, static replacements and later parts left out)."""
    out: dict[str, list[dict]] = {}
    for r in records:
        if r["phase"] in ("eager", "incremental", "revoke") and r.get("part", 1) == 1:
            out.setdefault(r["strategy"], []).append(r)
    return out


def test_static_restarts_cause_no_rebalance(history_records):
    records = history_records("static-restarts")
    # line 1: metadata, 2: traffic, 3-8: the six first joins, then two rolling restarts
    restart_lines = set(range(9, 21))
    for strategy, starts in rebalances_by_strategy(records).items():
        assert [r["cause"]["source"]["line"] for r in starts] == list(range(3, 9)), strategy
    replaced = [r for r in records if r["cause"]["source"]["line"] in restart_lines]
    assert replaced and all(r["phase"] == "replace" and r["paused"] == 0 and r["moves"] == 0 for r in replaced)


def test_flapping_member_storm_rebalances_every_strategy(history_records):
    for strategy, starts in rebalances_by_strategy(history_records("flapping-member")).items():
        assert len(starts) == 8 + 24, strategy
        storm = [r["event_ts"] for r in starts[8:]]
        assert storm[-1] - storm[0] < 20 * 60_000


def test_rolling_deploy_rebalances_twice_per_member(history_records):
    for strategy, starts in rebalances_by_strategy(history_records("rolling-deploy")).items():
        assert len(starts) == 12 + 2 * 12, strategy


@pytest.mark.parametrize("name", list(HISTORIES))
def test_phase_says_how_a_strategy_pauses(name, history_records):
    """Eager client strategies pause everything held; KIP-848's broker-side ones (one round, reconciled
    incrementally) and cooperative-sticky pause only what they revoke."""
    phases = {"range": {"eager"}, "roundrobin": {"eager"}, "sticky": {"eager"}, "metaq-default": {"eager"},
              "metaq-consistent-hash": {"eager"}, "weighted-sticky": {"eager"}, "rate-balanced": {"eager"},
              "uniform": {"incremental"}, "server-range": {"incremental"},
              "cooperative-sticky": {"revoke", "followup"}}
    for r in history_records(name):
        if r["phase"] == "replace":
            continue
        assert r["phase"] in phases[r["strategy"]], r
        if r["phase"] != "eager":
            assert r["paused"] == r["revoked"], r


def test_mixed_instance_sizes_carry_weights():
    evs = events("mixed-instance-sizes")
    weights = [e.get("weight") for e in evs if e["type"] == "join"]
    assert set(weights) == {1, 2, 4}
    joins: dict[str, list] = {}
    for e in evs:
        if e["type"] == "join":
            joins.setdefault(e["member"], []).append(e["weight"])
    assert [w for w in joins.values() if len(w) > 1] == [[2, 4]]  # a medium instance resized to large


def test_weighted_sticky_loads_follow_the_instance_sizes(history_records):
    held: dict[str, set] = {}
    for d in history_records("mixed-instance-sizes"):
        if d["strategy"] != "weighted-sticky":
            continue
        for member, c in d["changes"].items():
            mine = held.setdefault(member, set())
            mine -= {(t, p) for t, ps in c["revoked"].items() for p in ps}
            mine |= {(t, p) for t, ps in c["assigned"].items() for p in ps}
    weight = {}
    for e in events("mixed-instance-sizes"):
        if e["type"] == "join":
            weight[e["member"]] = e.get("weight", 1)
        elif e["type"] == "leave":
            del weight[e["member"]]
    total = sum(weight.values())
    for member, w in weight.items():
        assert abs(len(held[member]) - 72 * w / total) < 1, (member, w, len(held[member]))

"""`traffic` events and the load fields of diff records (contract §7, docs/traffic.md): validation, no rounds, the
state they persist, and the formulas recomputed here independently and compared exactly on every record."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from test_group_state import random_history, rec
from test_local_replay import SAMPLES, replay_values, write_log

from assignors.partitioner import partition_for_key
from streaming.core.config import PipelineConfig
from streaming.core.group_state import step
from streaming.core.local import read_jsonl, replay
from streaming.core.state_codec import decode, encode

LOAD_FIELDS = ("rate_total", "rate_min", "rate_max", "keys_moved")
STRATEGIES = ("sticky", "cooperative-sticky", "range", "uniform", "rate-balanced")
# a state blob written before traffic existed (members a and b on t with 3 partitions, sticky)
OLD_BLOB = bytes.fromhex(
    "0178014d8f410e83201045c5de64d6b3a8b68ba6e94d088b114943146b1017c6f68cbd5207680c2490f7ff1f3ee15b55d50ee1355bbdc0"
    "5d42008530913351317ad203e3b48e238233ae333e2612083099f15028a12b355f5c82a7609e36154996560f1b60ab38ebcd4c3e983e3f"
    "41ded3964b1ff606d8c4ba446da6ebe13125efbd3680e79826ba1c735cff39f197ca254af16721ea9a31ee1fab184044")


def run(events: list[dict | bytes], strategies: tuple[str, ...] = ("sticky",)) -> list[tuple[str, dict]]:
    records = [rec(e, i + 1) for i, e in enumerate(events)]
    out = list(replay(records, PipelineConfig(strategies=strategies), now_ms=lambda: 0))
    return [(o.kind, json.loads(o.value)) for o in out]


# -- the formulas, written here from the contract's text -----------------------------------------------------


def partition_rates(traffic: dict, n: int) -> list[float]:
    if "rates" in traffic:
        return [float(r) for r in traffic["rates"]] + [0.0] * (n - len(traffic["rates"]))
    keys = traffic.get("keys") or {}
    share = float(traffic.get("null_share", 0.0 if keys else 1.0))
    rate = float(traffic["rate"])
    total = math.fsum(float(w) for w in keys.values())
    out = []
    for p in range(n):
        if total > 0:
            wp = math.fsum(float(w) for k, w in keys.items() if partition_for_key(k.encode(), n) == p)
            out.append(rate * (share / n + (1 - share) * wp / total))
        else:
            out.append(rate * (share / n))
    return out


class Model:
    """One group as the contract describes it: topics, members' subscriptions, traffic, each strategy's owners."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}
        self.members: dict[str, tuple[list[str], str | None]] = {}  # id -> (topics, instance_id)
        self.traffic: dict[str, dict] = {}
        self.owned: dict[str, dict[str, set[tuple[str, int]]]] = {}  # strategy -> member -> partitions

    def apply(self, e: dict) -> dict[str, float]:
        """The event's effect; returns the `keys_moved` its rounds must carry."""
        kind = e["type"]
        old = dict(self.sizes)
        if kind == "traffic":
            self.traffic[e["topic"]] = e
        elif kind == "delete_topic":
            self.sizes[e["topic"]] = 0
            self.traffic.pop(e["topic"], None)
        elif kind == "leave":
            del self.members[e["member"]]
        elif kind == "subscribe":
            self.members[e["member"]] = (list(e["topics"]), self.members[e["member"]][1])
        elif kind == "join":
            instance = e.get("instance_id")
            holder = next((m for m, (_, i) in self.members.items() if instance is not None and i == instance), None)
            if holder is not None and holder != e["member"]:
                self.members = {(e["member"] if m == holder else m): v for m, v in self.members.items()}
            self.members[e["member"]] = (list(dict.fromkeys(e["topics"])), instance)
        if kind in ("join", "partitions"):
            self.sizes.update(e.get("partitions") or {})
        subscribed = self.subscribed()
        return {t: self.moved(t, old[t], n) for t, n in self.sizes.items()
                if t in subscribed and t in self.traffic and 0 < old.get(t, 0) != n and self.keyed(t)}

    def subscribed(self) -> set[str]:
        return {t for topics, _ in self.members.values() for t in topics}

    def keyed(self, topic: str) -> bool:
        keys = self.traffic[topic].get("keys") or {}
        return "rates" not in self.traffic[topic] and math.fsum(keys.values()) > 0

    def moved(self, topic: str, old: int, new: int) -> float:
        keys = self.traffic[topic]["keys"]
        gone = [w for k, w in keys.items() if partition_for_key(k.encode(), old) != partition_for_key(k.encode(), new)]
        return math.fsum(gone) / math.fsum(keys.values())

    def replay_changes(self, record: dict) -> None:
        owned = self.owned.setdefault(record["strategy"], {})
        for member, sides in record["changes"].items():
            held = owned.setdefault(member, set())
            for t, parts in sides["revoked"].items():
                held.difference_update((t, p) for p in parts)
            for t, parts in sides["assigned"].items():
                held.update((t, p) for p in parts)

    def expected(self, record: dict) -> dict[str, float]:
        """The load fields the record must carry after `replay_changes` (none for a group without traffic)."""
        subscribed = self.subscribed()
        if not any(t in self.traffic for t in subscribed):
            return {}
        rates = {t: partition_rates(self.traffic[t], n) if t in self.traffic else [0.0] * n
                 for t, n in self.sizes.items() if n}
        owned = self.owned.get(record["strategy"], {})
        loads = [math.fsum(rates[t][p] for t, p in owned.get(m, ())) for m in self.members]
        return {"rate_total": math.fsum(r for t in subscribed if t in rates for r in rates[t]),
                "rate_min": min(loads, default=0.0), "rate_max": max(loads, default=0.0)}


def check_history(events: list[dict | bytes], strategies: tuple[str, ...]) -> int:
    """Replays `events` and checks every diff record's load fields against `Model`; returns the records checked
    that carry them."""
    records = [rec(e, i + 1) for i, e in enumerate(events)]
    by_line: dict[int, list[tuple[str, dict]]] = {}
    for o in replay(records, PipelineConfig(strategies=strategies), now_ms=lambda: 0):
        value = json.loads(o.value)
        by_line.setdefault(o.order[1], []).append((o.kind, value))
    model = Model()
    checked = 0
    for line, e in enumerate(events, 1):
        out = by_line.get(line, [])
        if not isinstance(e, dict) or any(kind == "dead-letter" for kind, _ in out):
            continue
        keys_moved = model.apply(e)
        if e["type"] == "traffic":
            assert out == [], "a traffic event makes no round"
        for kind, record in out:
            assert kind == "diff"
            model.replay_changes(record)
            want = model.expected(record)
            if want and keys_moved:
                want["keys_moved"] = keys_moved
            got = {k: record[k] for k in LOAD_FIELDS if k in record}
            assert got == want, (line, e, record)
            assert all(type(v) is float for k, v in got.items() if k != "keys_moved")
            checked += bool(got)
    return checked


def with_traffic(events: list[dict | bytes], seed: int) -> list[dict | bytes]:
    """`events` with traffic events sprinkled in: both forms, for topics the group knows (and some bad ones)."""
    rng = random.Random(seed)
    sizes: dict[str, dict[str, int]] = {}
    out: list[dict | bytes] = []
    for e in events:
        out.append(e)
        if not isinstance(e, dict):
            continue
        known = sizes.setdefault(e["group"], {})
        if e["type"] in ("partitions", "join"):
            for t, n in (e.get("partitions") or {}).items():
                if n >= known.get(t, 0):
                    known[t] = n
        elif e["type"] == "delete_topic":
            known.pop(e["topic"], None)
        if not known or rng.random() > 0.3:
            continue
        t = rng.choice(sorted(known))
        n = known[t]
        roll = rng.random()
        if roll < 0.4:
            event = {"rates": [rng.choice([0, 1, 2.5, rng.uniform(0, 1e4)]) for _ in range(n)]}
        elif roll < 0.9:
            event = {"rate": rng.choice([0, 100, rng.uniform(0, 1e5)]),
                     "keys": {f"user-{rng.randrange(50)}": rng.choice([0, 1, rng.uniform(0, 10)])
                              for _ in range(rng.randrange(0, 8))}}
            if rng.random() < 0.6:
                event["null_share"] = rng.choice([0, 1, rng.random()])
        else:
            event = rng.choice([{"rates": [1] * (n + 1)}, {"rate": -1}, {"rate": 5, "null_share": 1.5}])
        out.append({"group": e["group"], "type": "traffic", "topic": t, **event})
    return out


@pytest.mark.parametrize("seed", range(8))
def test_contract_formulas_hold_exactly_on_every_record(seed: int) -> None:
    events = with_traffic(random_history(100 + seed, n_events=150, invalid=True), seed)
    assert check_history(events, STRATEGIES) > 50


def test_a_growing_topic_with_keyed_traffic_reports_keys_moved() -> None:
    events = [{"group": "g", "type": "join", "member": "a", "topics": ["t"], "partitions": {"t": 4}},
              {"group": "g", "type": "traffic", "topic": "t", "rate": 1000,
               "keys": {f"user-{i}": i + 1 for i in range(20)}, "null_share": 0.25},
              {"group": "g", "type": "join", "member": "b", "topics": ["t"]},
              {"group": "g", "type": "partitions", "partitions": {"t": 6}}]
    assert check_history(events, STRATEGIES) > 0
    grown = [r for kind, r in run(events, STRATEGIES) if r["cause"]["type"] == "partitions"]
    assert grown and all(0 < r["keys_moved"]["t"] < 1 for r in grown)
    assert all("keys_moved" not in r for kind, r in run(events[:3], STRATEGIES))


def test_keyed_traffic_is_spread_again_and_rates_keep_their_values_when_a_topic_grows() -> None:
    keyed = {"rate": 600, "keys": {"a": 1, "b": 2, "c": 3}, "null_share": 0.5}
    base = [{"group": "g", "type": "join", "member": "a", "topics": ["t", "u"], "partitions": {"t": 2, "u": 2}},
            {"group": "g", "type": "traffic", "topic": "t", **keyed},
            {"group": "g", "type": "traffic", "topic": "u", "rates": [5, 7]},
            {"group": "g", "type": "partitions", "partitions": {"t": 5, "u": 4}}]
    out = run(base)
    assert out[-1][1]["rate_total"] == math.fsum([*partition_rates(keyed, 5), 5.0, 7.0, 0.0, 0.0])
    assert math.isclose(math.fsum(partition_rates(keyed, 5)), 600)
    assert check_history(base, ("sticky",)) == 1


def test_only_groups_with_traffic_for_a_subscribed_topic_get_the_fields() -> None:
    events = [{"group": "g", "type": "join", "member": "a", "topics": ["t"], "partitions": {"t": 2, "x": 3}},
              {"group": "g", "type": "traffic", "topic": "x", "rates": [1, 2, 3]},
              {"group": "g", "type": "join", "member": "b", "topics": ["t"]},
              {"group": "g", "type": "subscribe", "member": "b", "topics": ["t", "x"]}]
    out = run(events)
    assert [any(k in r for k in LOAD_FIELDS) for _, r in out] == [False, False, True]
    assert out[-1][1]["rate_total"] == 6.0


def test_latest_traffic_event_per_topic_wins_and_a_deleted_topic_loses_its_traffic() -> None:
    events = [{"group": "g", "type": "join", "member": "a", "topics": ["t", "u"], "partitions": {"t": 2, "u": 1}},
              {"group": "g", "type": "traffic", "topic": "t", "rates": [1, 2]},
              {"group": "g", "type": "traffic", "topic": "t", "rate": 10},
              {"group": "g", "type": "join", "member": "b", "topics": ["t", "u"]},
              {"group": "g", "type": "delete_topic", "topic": "t"},
              {"group": "g", "type": "partitions", "partitions": {"t": 2}}]
    out = [r for _, r in run(events)]
    assert [r.get("rate_total") for r in out] == [None, 10.0, None, None]
    assert (out[1]["rate_min"], out[1]["rate_max"]) == (5.0, 5.0)
    assert check_history(events, ("sticky", "range")) == 2


BAD_TRAFFIC = [
    ({"topic": "x", "rates": [1]}, "field 'topic': the group has no partition count for topic 'x'"),
    ({"rates": [1, 2]}, "field 'rates': 2 rates for the 3 partitions of topic 't'"),
    ({"rates": [1, -2, 3]}, "field 'rates[1]'"),
    ({"rates": [1, "2", 3]}, "field 'rates[1]': expected a number >= 0, got a string"),
    ({"rates": "123"}, "field 'rates': expected an array"),
    ({"rates": []}, "field 'rates': must not be empty"),
    ({"rates": [1, 2, 3], "rate": 5}, "field 'rate': given with 'rates'"),
    ({}, "field 'rate': missing"),
    ({"rate": -1}, "field 'rate'"),
    ({"rate": 1e300}, "field 'rate'"),
    ({"rate": 10**30}, "field 'rate'"),
    ({"rate": True}, "field 'rate': expected a number >= 0, got a boolean"),
    ({"rate": 5, "keys": [1]}, "field 'keys': expected an object"),
    ({"rate": 5, "keys": {"k": -1}}, "field 'keys.k'"),
    ({"rate": 5, "keys": {"k": None}}, "field 'keys.k': expected a number >= 0, got null"),
    ({"rate": 5, "null_share": 1.5}, "field 'null_share': expected a number in [0, 1], got 1.5"),
    ({"rate": 5, "null_share": -0.1}, "field 'null_share'"),
    ({"rate": 5, "null_share": "half"}, "field 'null_share': expected a number in [0, 1], got a string"),
    ({"topic": 3, "rate": 5}, "field 'topic': expected a string"),
]


@pytest.mark.parametrize(("fields", "reason"), BAD_TRAFFIC)
def test_bad_traffic_events_are_dead_letters_naming_the_field(fields: dict, reason: str) -> None:
    events = [{"group": "g", "type": "join", "member": "a", "topics": ["t"], "partitions": {"t": 3}},
              {"group": "g", "type": "traffic", "topic": "t", **fields},
              {"group": "g", "type": "join", "member": "b", "topics": ["t"]}]
    out = run(events)
    assert [kind for kind, _ in out] == ["diff", "dead-letter", "diff"]
    assert out[1][1]["reason"].startswith(reason), out[1][1]["reason"]
    assert not any(k in out[2][1] for k in LOAD_FIELDS), "a dead letter changes nothing"


def test_non_finite_numbers_are_dead_letters() -> None:
    head = rec({"group": "g", "type": "join", "member": "a", "topics": ["t"], "partitions": {"t": 1}}, 1)
    for text in (b'{"group":"g","type":"traffic","topic":"t","rates":[NaN]}',
                 b'{"group":"g","type":"traffic","topic":"t","rate":Infinity}',
                 b'{"group":"g","type":"traffic","topic":"t","rate":1,"null_share":NaN}'):
        _, out = step("g", None, [head, rec(text, 2)], PipelineConfig(strategies=("range",)), 0)
        assert [o.kind for o in out] == ["diff", "dead-letter"]


def test_traffic_is_kept_in_the_state_and_old_blobs_still_decode() -> None:
    config = PipelineConfig(strategies=("sticky",))
    events = [{"group": "g", "type": "join", "member": "a", "topics": ["t"], "partitions": {"t": 3}},
              {"group": "g", "type": "traffic", "topic": "t", "rate": 9, "keys": {"k": 1.5, "é": 0.5}}]
    blob, _ = step("g", None, [rec(e, i) for i, e in enumerate(events, 1)], config, 0)
    state = decode(blob)
    assert list(state.traffic) == ["t"] and state.traffic["t"].weights == (1.5, 0.5)
    assert encode(decode(blob)) == blob
    old = decode(OLD_BLOB)
    assert old.traffic == {} and old.grown == {} and [m.id for m in old.members] == ["a", "b"]
    assert encode(old) == OLD_BLOB, "a group without traffic keeps its blob's bytes"
    # resuming from the blob gives what the uninterrupted replay gives
    rest = [rec({"group": "g", "type": "join", "member": "b", "topics": ["t"]}, 3)]
    _, resumed = step("g", blob, rest, config, 0)
    _, whole = step("g", None, [rec(e, i) for i, e in enumerate(events, 1)] + rest, config, 0)
    assert [o.value for o in resumed] == [o.value for o in whole[-len(resumed):]]
    assert b'"rate_min":2.25' in resumed[0].value


def test_same_bytes_whatever_the_batching_and_restarts(tmp_path: Path) -> None:
    events = with_traffic(random_history(21, n_events=120, groups=("g1", "g2")), 21)
    records = list(read_jsonl(write_log(tmp_path / "log.jsonl", events)))
    config = PipelineConfig(strategies=("sticky", "rate-balanced"))
    whole = replay_values(records, config, None)
    assert sum(b'"rate_total"' in v for *_, v in whole) > 20
    assert replay_values(records, config, 1) == whole
    states: dict[str, bytes] = {}
    head = [(o.kind, o.key, o.order, o.value) for o in replay(records[:50], config, now_ms=lambda: 0, states=states)]
    tail = [(o.kind, o.key, o.order, o.value) for o in replay(records[50:], config, now_ms=lambda: 0, states=states)]
    assert head + tail == whole


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*.jsonl") if p.name != "large-group.jsonl"))
def test_samples_without_their_traffic_give_the_same_records_less_the_load_fields(sample: str, tmp_path: Path) -> None:
    """The traffic lines blanked (line numbers kept): records of groups without traffic are byte-identical, the
    others differ only by the load fields and `lag_added`."""
    lines = (SAMPLES / sample).read_bytes().split(b"\n")
    blank = [b"" if b'"type":"traffic"' in line.replace(b" ", b"") else line for line in lines]
    stripped = tmp_path / sample  # the same name: records name their source file
    stripped.write_bytes(b"\n".join(blank))
    # not `rate-balanced`: its assignments follow the traffic
    config = PipelineConfig(strategies=("sticky", "cooperative-sticky", "uniform"))
    full = list(replay(read_jsonl(SAMPLES / sample), config, now_ms=lambda: 0))
    bare = list(replay(read_jsonl(stripped), config, now_ms=lambda: 0))
    assert [o.order for o in full] == [o.order for o in bare]
    for a, b in zip(full, bare, strict=True):
        if b'"rate_total"' not in a.value:
            assert a.value == b.value
        else:
            loaded = {k: v for k, v in json.loads(a.value).items() if k not in (*LOAD_FIELDS, "lag_added")}
            assert json.dumps(loaded) == json.dumps(json.loads(b.value))


def test_rate_balanced_in_the_state_machine_balances_the_reported_load() -> None:
    """What the strategy balances is what the records report: its busiest member is within bound 1 and less busy
    than range's."""
    events = [{"group": "g", "type": "join", "member": m, "topics": ["t"], "partitions": {"t": 8}} for m in "abc"]
    rates = [900, 10, 10, 10, 10, 10, 300, 300]
    events.insert(1, {"group": "g", "type": "traffic", "topic": "t", "rates": rates})
    last = run(events, ("rate-balanced", "range"))
    by_strategy = {r["strategy"]: r for _, r in last[-2:]}
    total = math.fsum(rates)
    assert by_strategy["rate-balanced"]["rate_max"] <= total / 3 + (2 / 3) * 900
    assert by_strategy["rate-balanced"]["rate_max"] == 900.0 < by_strategy["range"]["rate_max"]


def test_a_captured_group_reports_the_keys_moved_since_its_last_round_at_its_next_generation() -> None:
    """A captured history rebalances at its generations only: the growths of a keyed topic between two of them
    make no round, and the next generation's records carry `keys_moved` from the count at the last round (4)
    to the count now (9), in every strategy's records and `observed`'s; the one after carries none. The same
    records whatever the batching, across a restart from the state blob."""
    keys = {f"user-{i}": 1 + i % 5 for i in range(40)}

    def generation(n: int, size: int) -> dict:
        return {"group": "g", "type": "generation", "generation": n, "protocol": "range",
                "members": {"a": {"topics": ["t"], "assigned": {"t": list(range(0, size, 2))}},
                            "b": {"topics": ["t"], "assigned": {"t": list(range(1, size, 2))}}}}

    events: list[dict | bytes] = [
        {"group": "g", "type": "partitions", "partitions": {"t": 4}},
        generation(1, 4),
        {"group": "g", "type": "traffic", "topic": "t", "rate": 1000, "keys": keys},
        {"group": "g", "type": "partitions", "partitions": {"t": 6}},
        {"group": "g", "type": "partitions", "partitions": {"t": 9}},
        generation(2, 9),
        generation(3, 9),
    ]
    strategies = ("sticky", "cooperative-sticky", "uniform", "rate-balanced")
    out = run(events, strategies)
    lines = [r["cause"]["source"]["line"] for kind, r in out if kind == "diff"]
    assert 4 not in lines and 5 not in lines, "a captured group's growth makes no round"
    gone = math.fsum(w for k, w in keys.items() if partition_for_key(k.encode(), 4) != partition_for_key(k.encode(), 9))
    at_6 = [r for kind, r in out if kind == "diff" and r["cause"]["source"]["line"] == 6]
    assert {r["strategy"] for r in at_6} == {*strategies, "observed"}
    assert all(r["keys_moved"] == {"t": gone / math.fsum(keys.values())} for r in at_6), at_6
    assert not any("keys_moved" in r for kind, r in out if kind == "diff" and r["cause"]["source"]["line"] == 7)
    records = [rec(e, i + 1) for i, e in enumerate(events)]
    config = PipelineConfig(strategies=strategies)
    whole = replay_values(records, config, None)
    assert replay_values(records, config, 1) == whole
    states: dict[str, bytes] = {}
    head = [(o.kind, o.key, o.order, o.value) for o in replay(records[:5], config, now_ms=lambda: 0, states=states)]
    assert decode(states["g"]).grown == {"t": 4}, "the count at the last round survives the blob"
    tail = [(o.kind, o.key, o.order, o.value) for o in replay(records[5:], config, now_ms=lambda: 0, states=states)]
    assert head + tail == whole
    assert decode(states["g"]).grown == {}

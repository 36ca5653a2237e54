"""The cost model (docs/cost.md, contract §8): every diff record's `stopped_ms` against the formula, recomputed
here from the record's own `paused`, its strategy (or recorded `protocol`) and the timing, on random histories
of every strategy and of recorded generations; its JSON spelling; the same bytes whatever the batching and
across restarts; `rebalance_ms=observed` from the captured durations; `lag_added`."""

from __future__ import annotations

import json
import math
import random
import zlib
from fractions import Fraction

import numpy as np
import pytest

from assignors.registry import STRATEGIES
from streaming.core.config import Limits, PipelineConfig, Timing
from streaming.core.cost import NOTHING_PAUSED, Paused, lag_added, partition_stop_ms, stopped_ms
from streaming.core.local import replay
from streaming.core.record_encoding import dumps
from streaming.core.records import DEAD_LETTER, DIFF, SourceRecord
from streaming.core.state_codec import decode, encode

CONSUMER = ("uniform", "server-range")
PROTOCOLS = (None, "range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "server-range")


def random_history(seed: int, events: int = 120) -> list[dict]:
    """Two groups: joins, leaves, subscriptions, growing topics, and `generation` events (random recorded
    assignments and protocols, some with a captured `rebalance_ms`, some emptying the group)."""
    rng = random.Random(seed)
    log: list[dict] = []
    groups = {g: {"members": {}, "sizes": {"a": rng.randint(1, 6), "b": rng.randint(1, 4)}, "gen": 0}
              for g in ("g1", "g2")}
    for g, st in groups.items():
        log.append({"group": g, "type": "partitions", "partitions": dict(st["sizes"])})
    next_id = 0
    for _ in range(events):
        g = rng.choice(list(groups))
        st = groups[g]
        members: dict[str, list[str]] = st["members"]
        roll = rng.random()
        if roll < 0.3 or not members:
            next_id += 1
            topics = rng.choice([["a"], ["b"], ["a", "b"]])
            members[f"m{next_id}"] = topics
            log.append({"group": g, "type": "join", "member": f"m{next_id}", "topics": topics})
        elif roll < 0.45:
            mid = rng.choice(list(members))
            del members[mid]
            log.append({"group": g, "type": "leave", "member": mid})
        elif roll < 0.55:
            mid = rng.choice(list(members))
            members[mid] = rng.choice([["a"], ["b"], ["a", "b"]])
            log.append({"group": g, "type": "subscribe", "member": mid, "topics": members[mid]})
        elif roll < 0.65:
            t = rng.choice(["a", "b"])
            st["sizes"][t] += rng.randint(1, 3)
            log.append({"group": g, "type": "partitions", "partitions": {t: st["sizes"][t]}})
        else:
            if rng.random() < 0.1:
                members.clear()
            st["gen"] += rng.choice([1, 1, 1, 2])
            recorded = {}
            ids = list(members)
            for mid in ids:
                recorded[mid] = {"topics": members[mid], "assigned": {}}
            for t, n in st["sizes"].items():
                holders = [mid for mid in ids if t in members[mid]]
                for p in range(n):
                    if holders:
                        recorded[rng.choice(holders)]["assigned"].setdefault(t, []).append(p)
            event = {"group": g, "type": "generation", "generation": st["gen"], "protocol": rng.choice(PROTOCOLS),
                     "members": recorded}
            if rng.random() < 0.6:
                event["rebalance_ms"] = rng.choice([0, 1, 250, 4_321, 60_000])
            log.append(event)
    return log


def source(log: list[dict]) -> list[SourceRecord]:
    return [SourceRecord(json.dumps(e).encode(), None, {"file": "log.jsonl", "line": i}, (0, i), None)
            for i, e in enumerate(log, 1)]


def recorded_durations(log: list[dict]) -> dict[tuple[str, int], int | None]:
    """(group, line) -> the latest `rebalance_ms` a `generation` event of the group recorded up to that line."""
    latest: dict[str, int | None] = {}
    out = {}
    for i, e in enumerate(log, 1):
        if e["type"] == "generation" and "rebalance_ms" in e:
            latest[e["group"]] = e["rebalance_ms"]
        out[e["group"], i] = latest.get(e["group"])
    return out


def expected_stopped(record: dict, timing: Timing, recorded: int | None) -> Fraction:
    """Contract §8 for one record: classic strategies `paused × rebalance_ms`, `uniform` / `server-range`
    `paused × heartbeat_ms / 2`; `observed` by its recorded protocol."""
    protocol = record["protocol"] if record["strategy"] == "observed" else record["strategy"]
    if protocol in CONSUMER:
        return Fraction(record["paused"] * timing.heartbeat_ms, 2)
    classic = recorded if timing.observed and recorded is not None else timing.rebalance_ms
    return Fraction(record["paused"] * classic)


TIMINGS = [Timing(), Timing(1_000, 7), Timing(observed=True, heartbeat_ms=3_001), Timing(0, 0)]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("timing", TIMINGS, ids=lambda t: t.text())
def test_every_record_follows_the_formula(seed: int, timing: Timing) -> None:
    log = random_history(seed)
    config = PipelineConfig(STRATEGIES, Limits(), timing=timing)
    durations = recorded_durations(log)
    seen = {name: 0 for name in (*STRATEGIES, "observed")}
    halves = 0
    for out in replay(source(log), config, lambda: 0, max_events_per_batch=17):
        assert out.kind != DEAD_LETTER, out.value
        if out.kind != DIFF:
            continue
        record = json.loads(out.value)
        got = record["stopped_ms"]
        want = expected_stopped(record, timing, durations[record["group"], record["cause"]["source"]["line"]])
        assert Fraction(got) == want, record
        # an int when integral, else a float with one decimal (an odd paused × heartbeat_ms)
        assert isinstance(got, int) == (want.denominator == 1), record
        halves += isinstance(got, float)
        seen[record["strategy"]] += record["paused"] > 0
    assert all(seen.values()), seen  # every strategy (and observed) paused something
    if timing.heartbeat_ms % 2:
        assert halves  # the odd heartbeat gave half milliseconds


def test_observed_durations_apply_per_group_from_their_generation_on() -> None:
    timing = Timing(rebalance_ms=3_000, observed=True)
    log = [
        {"group": "g", "type": "partitions", "partitions": {"t": 4}},
        {"group": "g", "type": "join", "member": "a", "topics": ["t"]},
        {"group": "g", "type": "join", "member": "b", "topics": ["t"]},  # nothing captured yet: the default
        {"group": "g", "type": "generation", "generation": 5, "protocol": "range", "rebalance_ms": 800,
         "members": {"a": {"topics": ["t"], "assigned": {"t": [0, 1]}},
                     "b": {"topics": ["t"], "assigned": {"t": [2, 3]}}}},
        {"group": "g", "type": "generation", "generation": 6, "protocol": "range",  # none recorded: 800 ms still
         "members": {"a": {"topics": ["t"], "assigned": {"t": [0]}}, "b": {"topics": ["t"], "assigned": {"t": [1]}},
                     "c": {"topics": ["t"], "assigned": {"t": [2, 3]}}}},
        {"group": "h", "type": "partitions", "partitions": {"t": 2}},
        {"group": "h", "type": "join", "member": "x", "topics": ["t"]},  # another group: its own (none)
        {"group": "h", "type": "join", "member": "y", "topics": ["t"]},
    ]
    config = PipelineConfig(("sticky", "uniform"), Limits(), timing=timing)
    per_line = {}
    for out in replay(source(log), config, lambda: 0):
        r = json.loads(out.value)
        if out.kind == DIFF:
            per_line[r["cause"]["source"]["line"], r["strategy"]] = (r["paused"], r["stopped_ms"])
    assert per_line[3, "sticky"] == (4, 4 * 3_000)
    assert per_line[4, "sticky"][1] == per_line[4, "sticky"][0] * 800
    assert per_line[4, "observed"][1] == per_line[4, "observed"][0] * 800  # range: classic, its own duration
    assert per_line[5, "sticky"] == (4, 4 * 800)
    assert per_line[5, "observed"][1] == per_line[5, "observed"][0] * 800
    assert per_line[5, "uniform"][1] == per_line[5, "uniform"][0] * 2_500  # the consumer protocol: heartbeat / 2
    assert per_line[8, "sticky"] == (2, 2 * 3_000)


def test_the_captured_duration_survives_the_state_blob_and_old_blobs_decode() -> None:
    log = [{"group": "g", "type": "partitions", "partitions": {"t": 2}},
           {"group": "g", "type": "generation", "generation": 1, "protocol": "range", "rebalance_ms": 1_234,
            "members": {"a": {"topics": ["t"], "assigned": {"t": [0, 1]}}}}]
    states: dict[str, bytes] = {}
    list(replay(source(log), PipelineConfig(("sticky",)), lambda: 0, states=states))
    state = decode(states["g"])
    assert state.rebalance_ms == 1_234
    state.rebalance_ms = None  # what a blob written before the field decodes as; its bytes are unchanged
    assert b"rebalance_ms" not in zlib.decompress(encode(state)[1:])
    assert decode(encode(state)).rebalance_ms is None


@pytest.mark.parametrize("timing", [Timing(observed=True, heartbeat_ms=4_999), Timing(2_000, 5_000)],
                         ids=lambda t: t.text())
def test_records_are_byte_identical_whatever_the_batching_and_across_restarts(timing: Timing) -> None:
    log = random_history(7, events=90)
    config = PipelineConfig(STRATEGIES, Limits(), timing=timing)
    whole = [o.value for o in replay(source(log), config, lambda: 0, max_events_per_batch=None)]
    for batch in (1, 5, 33):
        assert [o.value for o in replay(source(log), config, lambda: 0, max_events_per_batch=batch)] == whole
    states: dict[str, bytes] = {}  # a restart: the second half from the first half's state blobs
    cut = len(log) // 2
    records = source(log)
    first = [o.value for o in replay(records[:cut], config, lambda: 0, states=states)]
    second = [o.value for o in replay(records[cut:], config, lambda: 0, states=states, max_events_per_batch=4)]
    assert first + second == whole


def test_a_bad_captured_duration_is_a_dead_letter() -> None:
    bad = {"group": "g", "type": "generation", "generation": 1, "protocol": "range", "rebalance_ms": -5,
           "members": {}}
    outs = list(replay(source([bad]), PipelineConfig(("sticky",)), lambda: 0))
    assert [o.kind for o in outs] == [DEAD_LETTER]
    assert "rebalance_ms" in json.loads(outs[0].value)["reason"]


def test_half_milliseconds_are_spelt_alike_by_both_encoders() -> None:
    """`dumps` writes with orjson and falls back to the standard encoder: `stopped_ms` must read the same."""
    for paused in (1, 3, 999_999, 2_000_001):
        for heartbeat in (1, 4_999, 2**31 - 1):
            value = stopped_ms("uniform", paused, 0, heartbeat)
            assert dumps({"v": value}) == json.dumps({"v": value}, separators=(",", ":")).encode()
            assert Fraction(json.loads(dumps(value))) == Fraction(paused * heartbeat, 2)


def test_stop_per_partition_and_lag_added() -> None:
    assert partition_stop_ms("sticky", 3_000, 5_000) == 3_000
    assert partition_stop_ms(None, 3_000, 5_000) == 3_000  # an emptied group's recorded protocol: classic
    assert partition_stop_ms("uniform", 3_000, 5_000) == 2_500
    assert partition_stop_ms("server-range", 3_000, 5_001) == 2_500.5
    assert stopped_ms("cooperative-sticky", 3, 3_000, 5_000) == 9_000
    assert stopped_ms("server-range", 3, 3_000, 5_001) == 7_501.5
    rates = [120.0, 80.5, 0.0, 310.2, 1e-9]
    # messages piled up: rate × seconds stopped, summed exactly (fsum) over the paused partitions
    assert lag_added(paused(rates), 3_000) == math.fsum(r * 3_000 / 1_000 for r in rates)
    assert lag_added(paused(rates), 2_500.5) == math.fsum(r * 2_500.5 / 1_000 for r in rates)
    assert lag_added(paused([]), 3_000) == 0.0
    assert lag_added(NOTHING_PAUSED, 3_000) == 0.0
    assert lag_added(paused([100.0, 50.0]), 3_000) == 450.0  # 150 msgs/s for 3 s
    assert lag_added(paused(rates[::-1]), 3_000) == lag_added(paused(rates), 3_000)  # order-free, bit for bit
    # only what the round pauses counts: held before it, and (a cooperative or incremental round) revoked
    before = np.array([0, 0, -1, 1], dtype=np.int32)
    after = np.array([0, 1, 1, -1], dtype=np.int32)
    four = np.array([1.0, 2.0, 4.0, 8.0])
    assert lag_added(Paused(four, before, after), 1_000) == 10.0
    assert lag_added(Paused(four, before, None), 1_000) == 11.0


def paused(rates: list[float]) -> Paused:
    """`rates` as the partitions an eager round pauses, every one held."""
    return Paused(np.array(rates, dtype=np.float64), np.zeros(len(rates), dtype=np.int32), None)


def with_rates(log: list[dict], seed: int) -> list[dict]:
    """`log` with `rates` traffic events for group g1's topics sprinkled in (g2 keeps none): random msgs/s per
    partition, zeros and fractions among them, each as long as the topic's count at that point."""
    rng = random.Random(seed)
    sizes: dict[str, int] = {}
    out: list[dict] = []
    for e in log:
        out.append(e)
        if e["group"] == "g1" and e["type"] == "partitions":
            sizes.update(e["partitions"])
        if sizes and rng.random() < 0.2:
            t = rng.choice(sorted(sizes))
            rates = [rng.choice([0, 1, 2.5, 1 / 3, 1_000.125, rng.uniform(0, 5_000)]) for _ in range(sizes[t])]
            out.append({"group": "g1", "type": "traffic", "topic": t, "rates": rates})
    return out


class LagModel:
    """Contract §8's `lag_added`, from the log and the records alone: each group's msgs/s per partition and each
    strategy's owners, replayed from the records' `changes`."""

    def __init__(self, timing: Timing) -> None:
        self.timing = timing
        self.rates: dict[str, dict[str, list[float]]] = {}  # group -> topic -> msgs/s per partition
        self.sizes: dict[str, dict[str, int]] = {}
        self.owned: dict[tuple[str, str], dict[tuple[str, int], str]] = {}  # (group, strategy) -> partition -> member

    def apply(self, e: dict) -> None:
        sizes = self.sizes.setdefault(e["group"], {})
        if e["type"] == "partitions":
            sizes.update(e["partitions"])
        elif e["type"] == "traffic":
            self.rates.setdefault(e["group"], {})[e["topic"]] = [float(r) for r in e["rates"]]

    def rate(self, group: str, topic: str, p: int) -> float:
        rates = self.rates.get(group, {}).get(topic, [])
        return rates[p] if p < len(rates) else 0.0  # partitions added since the traffic event carry 0

    def expected(self, record: dict, first: bool, recorded: int | None) -> float:
        """The record's `lag_added`; `first`: the event's first round of its strategy (before `replay`)."""
        protocol = record["protocol"] if record["strategy"] == "observed" else record["strategy"]
        if protocol in CONSUMER:
            stop: int | float = self.timing.heartbeat_ms / 2
        else:
            stop = recorded if self.timing.observed and recorded is not None else self.timing.rebalance_ms
        owned = self.owned.get((record["group"], record["strategy"]), {})
        if record["paused"] == 0:
            paused: list[tuple[str, int]] = []
        elif first and record["phase"] == "eager":  # everything held before the round, a leaver's too
            paused = list(owned)
        else:
            paused = [(t, p) for sides in record["changes"].values() for t, ps in sides["revoked"].items() for p in ps]
        assert len(paused) == record["paused"], record
        return math.fsum([self.rate(record["group"], t, p) * stop / 1000.0 for t, p in paused])

    def replay(self, record: dict) -> None:
        owned = self.owned.setdefault((record["group"], record["strategy"]), {})
        for member, sides in record["changes"].items():
            for t, ps in sides["revoked"].items():
                for p in ps:
                    if owned.get((t, p)) == member:
                        del owned[t, p]
            for t, ps in sides["assigned"].items():
                for p in ps:
                    owned[t, p] = member

    def left(self, group: str, member: str) -> None:
        """A leaver's partitions are gone whether or not a round said so (a captured group has none)."""
        for (g, _), owned in self.owned.items():
            if g == group:
                for key in [k for k, m in owned.items() if m == member]:
                    del owned[key]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("timing", TIMINGS, ids=lambda t: t.text())
def test_lag_added_follows_the_formula_on_every_record(seed: int, timing: Timing) -> None:
    """Every record of the group with traffic carries `lag_added` = fsum over its paused partitions of
    rate × per-partition stop / 1000, exactly (every strategy and `observed`); the other group's carry none."""
    log = with_rates(random_history(seed), seed)
    config = PipelineConfig(STRATEGIES, Limits(), timing=timing)
    durations = recorded_durations(log)
    by_line: dict[int, list[dict]] = {}
    for out in replay(source(log), config, lambda: 0, max_events_per_batch=13):
        assert out.kind != DEAD_LETTER, out.value
        if out.kind == DIFF:
            by_line.setdefault(out.order[1], []).append(json.loads(out.value))
    model = LagModel(timing)
    lagging = {name: 0 for name in (*STRATEGIES, "observed")}
    for line, e in enumerate(log, 1):
        model.apply(e)
        started: set[str] = set()
        for record in by_line.get(line, []):
            first = record["phase"] != "replace" and record["strategy"] not in started
            started.add(record["strategy"])
            assert ("lag_added" in record) == ("rate_total" in record), record
            if "lag_added" in record:
                assert list(record)[list(record).index("stopped_ms") + 1] == "lag_added"
                want = model.expected(record, first, durations[e["group"], line])
                assert type(record["lag_added"]) is float and record["lag_added"] == want, (line, record, want)
                lagging[record["strategy"]] += record["paused"] > 0 and (want > 0 or timing.rebalance_ms == 0)
            assert record["group"] == "g1" or "lag_added" not in record  # g2 has no traffic
            model.replay(record)
        if e["type"] == "leave":
            model.left(e["group"], e["member"])
    assert all(lagging.values()), lagging  # every strategy (and observed) paused partitions of the group with traffic

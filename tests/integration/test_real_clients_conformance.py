"""Real clients nobody here wrote, checked against Kafka's Java assignors.

kafka-python (range, roundrobin, sticky) and librdkafka through confluent-kafka (range, roundrobin) run a
consumer group on the broker (`client_groups.Scenario`: three members, one leaves, one joins, the topic
grows from 6 to 9 partitions); their generations are written as `generation` events and checked with
`rebalance conformance`. What is asserted:
- the scenario's generations are all there (3 members on 6 partitions, 2, the newcomer, 9 partitions);
- kafka-python: every member received exactly what its leader's assignor returned (the log is faithful);
- range and roundrobin: each verdict equals an independent check (one topic, dynamic members: range
  gives member i of the id-sorted members a contiguous block of ``n // k`` or ``n // k + 1``, roundrobin
  gives partition p to member ``p % k``);
- sticky: every generation gets a verdict; a deviation is a finding, printed and kept in
  docs/conformance.md, not a failure.
Each run prints `CLIENT STRATEGY vs Java: N generations, M conform`.
"""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest
from client_groups import GROWN_PARTITIONS, INITIAL_PARTITIONS, Scenario

from streaming.cli.conformance import check_log

RUNS = [("kafka-python", "range"), ("kafka-python", "roundrobin"), ("kafka-python", "sticky"),
        ("confluent-kafka", "range"), ("confluent-kafka", "roundrobin")]
CLIENT_MODULES = {"kafka-python": "kafka", "confluent-kafka": "confluent_kafka"}


def independent_expected(strategy: str, members: list[str], n: int, topic: str) -> dict[str, dict[str, list[int]]]:
    """Range / roundrobin over one topic and dynamic members with ASCII ids (Java String order = str order)."""
    ids, k = sorted(members), len(members)
    if strategy == "roundrobin":
        parts = {mid: [p for p in range(n) if p % k == i] for i, mid in enumerate(ids)}
    else:
        q, r = divmod(n, k)
        bounds = [i * q + min(i, r) for i in range(k + 1)]
        parts = {mid: list(range(bounds[i], bounds[i + 1])) for i, mid in enumerate(ids)}
    return {mid: {topic: ps} if ps else {} for mid, ps in parts.items()}


@pytest.mark.kafka
@pytest.mark.parametrize(("client", "strategy"), RUNS, ids=[f"{c}-{s}" for c, s in RUNS])
def test_real_client_generations_against_java(client: str, strategy: str, kafka_bootstrap: str,
                                               tmp_path: Path) -> None:
    if importlib.util.find_spec(CLIENT_MODULES[client]) is None:
        reason = f"{client} is not installed (pip install -e '.[test]')"
        print(reason)
        pytest.skip(reason)
    scenario = Scenario(client, strategy, kafka_bootstrap, tmp_path)
    scenario.run()
    events = scenario.generation_log()
    log = tmp_path / "generations.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))

    out, err = io.StringIO(), io.StringIO()
    counts = check_log(str(log), out, err, as_json=True)
    assert err.getvalue() == ""
    records = {r["generation"]: r for r in map(json.loads, out.getvalue().splitlines())}
    generations = [e for e in events if e["type"] == "generation"]
    assert sorted(records) == [e["generation"] for e in generations]

    sizes: dict[str, int] = {}
    phases = set()
    for event in events:
        if event["type"] == "partitions":
            sizes = event["partitions"]
            continue
        members = event["members"]
        names = {m["client_id"] for m in members.values()}
        n = sizes[scenario.topic]
        phases.add((frozenset(names), n))
        record = records[event["generation"]]
        if "leader_assignment" in event:  # kafka-python: each member got what its leader computed
            assert {mid: m["assigned"] for mid, m in members.items()} == event["leader_assignment"]
        if strategy in ("range", "roundrobin"):
            observed = {mid: m["assigned"] for mid, m in members.items()}
            independent = independent_expected(strategy, list(members), n, scenario.topic)
            assert record["conforms"] is (observed == independent), record
        else:
            assert record["conforms"] in (True, False), record
    assert {(frozenset({"m1", "m2", "m3"}), INITIAL_PARTITIONS), (frozenset({"m1", "m3"}), INITIAL_PARTITIONS),
            (frozenset({"m1", "m3", "m4"}), INITIAL_PARTITIONS), (frozenset({"m1", "m3", "m4"}), GROWN_PARTITIONS),
            } <= phases

    conform = sum(n for (_, verdict), n in counts.items() if verdict == "conform")
    print(f"{client} {strategy} vs Java {strategy}: {len(records)} generations, {conform} conform "
          f"({scenario.incomplete} generations not completed by every member left out)")
    for record in records.values():
        if record["conforms"] is False:
            print(f"  generation {record['generation']}: {_differences(record)}")


def _differences(record: dict[str, Any]) -> str:
    return json.dumps(record["differences"], sort_keys=True)

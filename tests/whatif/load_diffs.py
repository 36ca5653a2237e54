"""A diffs file written by hand for a group with traffic (contract §7 fields), for the report's load lane.

Group `clicks-app`, topic `clicks` with a hot key on partition 0, under `range` (eager) and
`cooperative-sticky` (a revoke round and its follow-up); `quiet-app` has the same rounds without traffic.
Rebalance 1: c-1 joins, 4 partitions at 600/100/150/150 msgs/s; rebalance 2: c-2 joins; rebalance 3: the
topic grows to 6 partitions under keyed traffic (re-spread 600/50/100/100/100/50; 40 % of the key weight
changes partition).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TS = 1_732_200_000_000


def record(group: str, strategy: str, generation: int, phase: str, cause: dict, changes: dict, members: int,
           partitions: int, loads: tuple[int, int], moves: int, paused: int, ts: int, **rates: Any) -> dict:
    return {"group": group, "strategy": strategy, "generation": generation, "phase": phase, "cause": cause,
            "changes": changes, "members": members, "partitions": partitions,
            "assigned": sum(len(p) for c in changes.values() for p in c.get("assigned", {}).values()),
            "revoked": sum(len(p) for c in changes.values() for p in c.get("revoked", {}).values()),
            "unassigned": 0, "paused": paused, "load_min": loads[0], "load_max": loads[1], "moves": moves,
            "min_moves": moves, "event_ts": ts, "emitted_ts": ts + 300, **rates}


def clicks_records(group: str = "clicks-app", traffic: bool = True) -> list[dict]:
    def rates(total: float, least: float, hottest: float, **extra: Any) -> dict:
        return {"rate_total": total, "rate_min": least, "rate_max": hottest, **extra} if traffic else {}

    def assign(**parts: list[int]) -> dict:
        return {m: {"assigned": {"clicks": p}, "revoked": {}} for m, p in parts.items()}

    join1 = {"type": "join", "member": "c-1"}
    join2 = {"type": "join", "member": "c-2"}
    grow = {"type": "partitions", "topic": "clicks"}
    moved = {"keys_moved": {"clicks": 0.4}}
    return [
        record(group, "range", 1, "eager", join1, assign(**{"c-1": [0, 1, 2, 3]}), 1, 4, (4, 4), 0, 0, TS,
               **rates(1000.0, 1000.0, 1000.0)),
        record(group, "range", 2, "eager", join2,
               {"c-1": {"assigned": {}, "revoked": {"clicks": [2, 3]}}, **assign(**{"c-2": [2, 3]})},
               2, 4, (2, 2), 2, 4, TS + 60_000, **rates(1000.0, 300.0, 700.0)),
        record(group, "range", 3, "eager", grow, assign(**{"c-1": [2], "c-2": [4, 5]}) | {
            "c-2": {"assigned": {"clicks": [4, 5]}, "revoked": {"clicks": [2]}}},
               2, 6, (3, 3), 1, 4, TS + 120_000, **rates(1000.0, 250.0, 750.0, **moved)),
        record(group, "cooperative-sticky", 1, "revoke", join1, assign(**{"c-1": [0, 1, 2, 3]}), 1, 4, (4, 4), 0,
               0, TS, **rates(1000.0, 1000.0, 1000.0)),
        record(group, "cooperative-sticky", 2, "revoke", join2,
               {"c-1": {"assigned": {}, "revoked": {"clicks": [2, 3]}}}, 2, 4, (0, 2), 2, 2, TS + 60_000,
               **rates(1000.0, 0.0, 700.0)),
        record(group, "cooperative-sticky", 3, "followup", join2, assign(**{"c-2": [2, 3]}), 2, 4, (2, 2), 0, 0,
               TS + 60_000, **rates(1000.0, 300.0, 700.0)),
        record(group, "cooperative-sticky", 4, "revoke", grow, assign(**{"c-1": [5], "c-2": [4]}), 2, 6, (3, 3), 0,
               0, TS + 120_000, **rates(1000.0, 300.0, 700.0, **moved)),
    ]


def write(path: Path) -> Path:
    """The diffs directory: `clicks-app` with traffic and `quiet-app` without."""
    path.mkdir(parents=True, exist_ok=True)
    records = clicks_records() + clicks_records("quiet-app", traffic=False)
    (path / "diffs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path

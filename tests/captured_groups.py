"""What a replayed captured history must show (docs/events-and-diffs.md §1): for a group whose every recorded
generation conforms, the group's own strategy gives exactly the `observed` records — the same rounds, moves,
pauses and final assignment. Read from the output records and the what-if report's rows, as a user reads them;
the core, capture and real-client tests share it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from whatif.report import build

# what differs between a strategy's record and the observed one by definition: the strategy counts its own rounds
# (`generation`) and names its protocol's phase; the observed record carries the recorded protocol and gaps
_BY_DEFINITION = ("strategy", "generation", "phase", "protocol", "skipped_generations", "emitted_ts")


def conforming_groups(conformance: Iterable[dict[str, Any]]) -> dict[str, str]:
    """group -> its protocol, for the groups whose conformance records all conform under one protocol."""
    verdicts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in conformance:
        verdicts[record["group"]].append(record)
    return {group: records[0]["protocol"] for group, records in verdicts.items()
            if all(r["conforms"] is True for r in records) and len({r["protocol"] for r in records}) == 1}


def rounds(diffs: Iterable[dict[str, Any]], group: str, strategy: str) -> list[dict[str, Any]]:
    """The group's rounds under `strategy` (static replacements are no rounds), without the fields that differ
    from the observed records by definition."""
    return [{k: v for k, v in d.items() if k not in _BY_DEFINITION} for d in diffs
            if d["group"] == group and d["strategy"] == strategy and d["phase"] != "replace"]


def report_view(diffs: list[dict[str, Any]], group: str, strategy: str) -> dict[str, Any]:
    """The strategy's row of the group in the what-if report, its rebalances and final assignment."""
    (g,) = [g for g in build(diffs).groups if g.group == group]
    (row,) = [r for r in g.rows if r.strategy == strategy]
    final = g.finals[strategy]
    return {"rebalances": row.rebalances, "rounds": row.rounds, "moves": row.moves, "paused": row.paused,
            "max_paused": row.max_paused, "final_imbalance": row.final_imbalance,
            "final_unassigned": row.final_unassigned,
            "history": [(b.assigned, b.moves, b.paused, b.unassigned, b.imbalance) for b in row.history],
            "final": (final.members, final.holdings)}


def assert_own_strategy_is_observed(diffs: list[dict[str, Any]], group: str, protocol: str) -> None:
    own, observed = rounds(diffs, group, protocol), rounds(diffs, group, "observed")
    assert observed, f"{group}: no observed records"
    assert len(own) == len(observed), f"{group}: {len(own)} {protocol} rounds, {len(observed)} observed"
    for i, (a, b) in enumerate(zip(own, observed, strict=True)):
        assert a == b, f"{group}: round {i + 1} of {protocol} differs from the observed one:\n{a}\n{b}"
    assert report_view(diffs, group, protocol) == report_view(diffs, group, "observed")

"""Diff record serialisation: the directly formatted records are the bytes `diffs.dumps` gives."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streaming.core.diffs import diff_records, dumps

# any text an event can carry (hypothesis leaves out lone surrogates, which events.py rejects): quotes,
# backslashes, control characters, non-ASCII
names = st.text(max_size=12)
ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
numbers = st.lists(st.integers(min_value=0, max_value=2**31 - 1), max_size=20)
sides = st.fixed_dictionaries({"assigned": st.dictionaries(names, numbers, max_size=3),
                               "revoked": st.dictionaries(names, numbers, max_size=3)})
changes = st.dictionaries(names, sides, max_size=4)
causes = st.fixed_dictionaries({"type": names, "member": names},
                               optional={"source": st.fixed_dictionaries({"file": names, "line": ints})})
heads = st.fixed_dictionaries({"group": names, "strategy": names, "generation": ints, "phase": names,
                               "cause": causes})
_METRICS = ("members", "partitions", "assigned", "revoked", "unassigned", "paused", "load_min", "load_max", "moves")
tails = st.fixed_dictionaries({**{k: ints for k in _METRICS}, "min_moves": st.none() | ints,
                               "event_ts": st.none() | ints, "emitted_ts": ints})


def _expected(head: dict[str, Any], ch: dict, tail: dict[str, Any]) -> bytes:
    return dumps({**head, "changes": ch, **tail})


@settings(max_examples=300, deadline=None)
@given(heads, changes, tails)
def test_a_usual_record_is_what_dumps_gives(head, ch, tail):
    assert diff_records(head, ch, tail, 1 << 20) == [_expected(head, ch, tail)]


@settings(max_examples=100, deadline=None)
@given(heads, changes, tails, st.data())
def test_a_record_with_other_fields_is_what_dumps_gives(head, ch, tail, data):
    head = {**head, "protocol": data.draw(names)} if data.draw(st.booleans()) else head
    tail = {**tail, "unconverged": True} if data.draw(st.booleans()) else {k: tail[k] for k in list(tail)[:-1]}
    assert diff_records(head, ch, tail, 1 << 20) == [_expected(head, ch, tail)]


@settings(max_examples=50, deadline=None)
@given(heads, heads, changes, tails)
def test_rounds_sharing_a_cause_and_the_next_cause(head, other, ch, tail):
    """A cause dict is encoded once for the rounds that share it; a new one is encoded anew."""
    shared = {**other, "cause": head["cause"]}
    for h in (head, shared, other, head):
        assert diff_records(h, ch, tail, 1 << 20) == [_expected(h, ch, tail)]


def test_split_parts_carry_every_change_under_the_limit():
    """Members go whole into parts where they fit, a member too big for one part is spread over several."""
    head = {"group": "g\"é", "strategy": "range", "generation": 3, "phase": "eager",
            "cause": {"type": "join", "member": "m\n"}}
    tail = {k: 1 for k in _METRICS} | {"min_moves": None, "event_ts": None, "emitted_ts": 5}
    ch = {f"member-{i}": {"assigned": {"topic ü": list(range(i * 300, i * 300 + 300 + 1_500 * (i == 11)))},
                          "revoked": {"t\\2": list(range(i))}} for i in range(12)}
    parts = diff_records(head, ch, tail, 4_096)
    assert len(parts) > 1 and all(len(p) <= 4_096 for p in parts)
    merged: dict[str, dict[str, dict[str, list[int]]]] = {}
    for i, raw in enumerate(parts, 1):
        record = json.loads(raw)
        assert (record["part"], record["parts"]) == (i, len(parts))
        assert {k: record[k] for k in head} == head
        for member, entry in record["changes"].items():
            for side, topics in entry.items():
                for topic, numbers in topics.items():
                    into = merged.setdefault(member, {"assigned": {}, "revoked": {}})[side]
                    into.setdefault(topic, []).extend(numbers)
    assert merged == ch

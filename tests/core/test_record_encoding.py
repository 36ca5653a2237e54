"""The records' bytes (`streaming.core.record_encoding`): `dumps` writes what the standard encoder writes, records
cost their size, and a diff record split into parts keeps every change once."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest

from streaming.core.record_encoding import diff_records, dumps


def _standard(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _tree(rng: random.Random, depth: int = 0) -> object:
    """A random JSON value of the types records hold, with strings over every escape class and plane and
    integers on both sides of 64 bits (orjson refuses those past them: the standard encoder writes them)."""
    kind = rng.randrange(7 if depth < 4 else 4)
    if kind == 0:
        return "".join(chr(rng.choice((rng.randrange(0x20), rng.randrange(0x20, 0x80), rng.randrange(0x80, 0xD800),
                                       rng.randrange(0xE000, 0x110000), 0x22, 0x5C, 0x7F, 0x2028)))
                       for _ in range(rng.randrange(12)))
    if kind == 1:
        return rng.choice((rng.randrange(-2**31, 2**31), rng.randrange(-2**70, 2**70),
                           2**63, 2**64 - 1, 2**64, -2**63 - 1))
    if kind == 2:
        return rng.choice((None, True, False))
    if kind == 3:
        return rng.randrange(10)
    if kind == 4:
        return [_tree(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 5:
        return tuple(_tree(rng, depth + 1) for _ in range(rng.randrange(3)))
    keys = [_tree(rng, 4) if rng.random() < 0.1 else str(_tree(rng, 3)) for _ in range(rng.randrange(4))]
    return {k: _tree(rng, depth + 1) for k in keys}


def test_dumps_writes_what_the_standard_encoder_writes() -> None:
    rng = random.Random(5)
    for _ in range(5_000):
        obj = _tree(rng)
        assert dumps(obj) == _standard(obj), obj
    for refused in ("\ud800", {"a": ["\udfff"]}):  # lone surrogates: no UTF-8 for them, as before
        with pytest.raises(UnicodeEncodeError):
            dumps(refused)


def test_records_carry_floats_only_in_their_load_fields() -> None:
    """Floats are the one type orjson writes differently from the standard encoder (`dumps`): every record of
    the bundled histories and a generated log, under every strategy, must parse without one outside the load
    fields and `lag_added` of groups with traffic (docs/events-and-diffs.md §2: the same double either way)."""
    from assignors.registry import STRATEGIES
    from bench.pipeline import generate_log
    from streaming.core.config import Limits, PipelineConfig
    from streaming.core.local import read_jsonl, replay

    def no_float(text: str) -> float:
        raise AssertionError(f"a float in a record: {text}")

    samples = Path(__file__).parents[2] / "whatif" / "samples"
    logs = [*sorted(samples.glob("*.jsonl")), generate_log(Path(tempfile.mkdtemp()) / "log.jsonl", 600, 60)]
    seen = 0
    for strategy in STRATEGIES:
        config = PipelineConfig((strategy,), Limits())
        for log in logs:
            for rec in replay(read_jsonl(log), config, lambda: 0, max_events_per_batch=50):
                record = json.loads(rec.value)
                for field in ("rate_total", "rate_min", "rate_max", "keys_moved", "lag_added"):
                    record.pop(field, None)
                json.loads(json.dumps(record), parse_float=no_float, parse_constant=no_float)
                seen += 1
    assert seen > 10_000


def test_held_records_cost_their_size() -> None:
    """A micro-batch's records are held until its sink writes them: 20,000 records of ~1 KB must cost about
    20 MiB, not the ~77 MiB orjson's grown buffers would (measured in a fresh process, peak RSS)."""
    script = (
        "import resource\n"
        "from streaming.core.record_encoding import dumps\n"
        "obj = {'group': 'g', 'changes': {f'm{i}': {'assigned': {'t': list(range(20))}, 'revoked': {}}"
        " for i in range(10)}}\n"
        "dumps(obj)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "held = [dumps(obj) for _ in range(20_000)]\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024, sum(map(len, held)) / 2**20)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parents[2]).stdout.split()
    grown_mib, payload_mib = float(out[0]), float(out[1])
    assert grown_mib < 2.5 * payload_mib, (grown_mib, payload_mib)


def _no_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), keys
    return dict(pairs)


def test_split_records_never_repeat_a_member_in_a_part() -> None:
    """A member too big for one part is cut into pieces; a short last piece would fit beside the one before it,
    but one part listing the member twice would lose one of them to any JSON reader."""
    changes = {"m-1": {"assigned": {"big": list(range(0, 1_000, 2)), "other": list(range(83))},
                       "revoked": {"big": list(range(1, 1_500, 2)), "other": list(range(125))}},
               "m-2": {"assigned": {"big": [7]}, "revoked": {}}}
    listed = sum(len(v) for sides in changes.values() for side in sides.values() for v in side.values())
    metrics = {"assigned": 584, "revoked": 875, "paused": 875}
    for max_bytes in range(3_000, 6_000, 7):
        parts = diff_records({"group": "g"}, changes, metrics, None, 0, max_bytes)
        merged: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        for part in parts:
            assert len(part) <= max_bytes
            record = json.loads(part, object_pairs_hook=_no_repeated_keys)
            for member, sides in record["changes"].items():
                for side, topics in sides.items():
                    for topic, numbers in topics.items():
                        merged[member, side, topic] += numbers
        assert sum(map(len, merged.values())) == listed, max_bytes
        assert merged == {(m, side, t): v for m, sides in changes.items() for side, ts in sides.items()
                          for t, v in ts.items()}

"""Fuzz of the line reader and the event parser: random bytes, truncated events, giant lines, deep JSON.

Whatever a log holds, reading it never crashes nor hangs, every line is read whole exactly as a naive
split of the file reads it, each rejected line becomes exactly one dead letter, and only lines that are
valid events on their own cause diffs (no event is invented from a piece of a line).
"""

from __future__ import annotations

import io
import json
import random
from collections import Counter

import pytest

from streaming.core.config import Limits, PipelineConfig
from streaming.core.events import InvalidEvent, parse_event
from streaming.core.lines import BOM, read_lines
from streaming.core.local import read_jsonl, replay

LIMITS = Limits(max_event_bytes=300)  # small, so giant lines are cheap
CONFIG = PipelineConfig(("sticky", "cooperative-sticky"), LIMITS)


def _valid(rng: random.Random, n: int) -> dict:
    group = f"g{rng.randrange(3)}"
    member = f"m{rng.randrange(5)}"
    kind = rng.choice(["join", "join", "leave", "subscribe", "partitions"])
    if kind == "join":
        return {"group": group, "type": "join", "member": member, "topics": [f"t{rng.randrange(3)}"], "ts": n}
    if kind == "leave":
        return {"group": group, "type": "leave", "member": member}
    if kind == "subscribe":
        return {"group": group, "type": "subscribe", "member": member, "topics": [f"t{rng.randrange(3)}"]}
    return {"group": group, "type": "partitions", "partitions": {f"t{rng.randrange(3)}": rng.randrange(1, 6)}}


def _poison(rng: random.Random, valid: bytes) -> bytes:
    """One hostile line (no "\\n" inside: a line is what ends at "\\n")."""
    kind = rng.randrange(8)
    if kind == 0:  # random bytes
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))).replace(b"\n", b"")
    if kind == 1:  # a valid event cut short
        return valid[: rng.randrange(1, len(valid))]
    if kind == 2:  # giant: padding, then a valid event as its tail (the injection shape)
        return b'{"pad": "' + b"x" * rng.randrange(300, 2000) + b'"} ' + valid
    if kind == 3:  # deep nesting
        depth = rng.choice([50, 100, 5000])
        return b"[" * depth + b"]" * depth if rng.random() < 0.5 else b'{"a":' * depth + b"1" + b"}" * depth
    if kind == 4:  # duplicate keys: the second group would win silently
        return valid[:-1] + b', "group": "other"}'
    if kind == 5:  # pretty-printed fragments
        return rng.choice([b"{", b"}", b'  "group": "g0",', b"["])
    if kind == 6:  # a huge number
        return b'{"group": "g0", "type": "partitions", "partitions": {"t0": ' + b"9" * 250 + b"}}"
    return valid.replace(b'"', b"'")  # not JSON


def _log(seed: int) -> tuple[bytes, set[int]]:
    """A random log and the numbers of its poison lines."""
    rng = random.Random(seed)
    lines, poison = [], set()
    for n in range(1, 120):
        valid = json.dumps(_valid(rng, n)).encode()
        r = rng.random()
        if r < 0.35:
            lines.append(_poison(rng, valid))
            poison.add(n)
        elif r < 0.4:
            lines.append(b"  ")
        else:
            lines.append(valid + (b"\r" if rng.random() < 0.1 else b""))
    data = b"\n".join(lines) + rng.choice([b"\n", b""])
    return (BOM + data if seed % 3 == 0 else data), poison


def _naive(data: bytes) -> dict[int, bytes]:
    """The lines of a log as a plain split reads them: the reference the streaming reader must match."""
    if data.startswith(BOM):
        data = data[len(BOM):]
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    out = {}
    for n, part in enumerate(parts, 1):
        part = part[:-1] if part.endswith(b"\r") else part
        if part.strip():
            out[n] = part
    return out


@pytest.mark.parametrize("seed", range(8))
def test_random_logs(seed: int, tmp_path) -> None:
    data, poison = _log(seed)
    expected = _naive(data)
    lines = list(read_lines(io.BytesIO(data), LIMITS.max_event_bytes, complete=True))
    assert [x.number for x in lines] == list(expected)
    for x in lines:  # whole, or cut to a prefix carrying the true size: never split
        assert x.size == len(expected[x.number])
        assert x.value == expected[x.number][: len(x.value)]
        assert x.cut == (x.size > LIMITS.max_event_bytes)

    log = tmp_path / "fuzz.jsonl"
    log.write_bytes(data)
    out = list(replay(read_jsonl(log, max_event_bytes=LIMITS.max_event_bytes), CONFIG, now_ms=lambda: 0,
                      max_events_per_batch=17))
    dead = [json.loads(o.value) for o in out if o.kind == "dead-letter"]
    diffs = [json.loads(o.value) for o in out if o.kind == "diff"]
    assert not [d for d in dead if d["reason"].startswith("internal error")]
    dead_lines = Counter(d["source"]["line"] for d in dead)
    assert all(c == 1 for c in dead_lines.values()), dead_lines  # one dead letter per rejected line
    assert {n for n in poison if n in expected} <= set(dead_lines)  # every poison line is rejected
    for d in diffs:  # a diff's cause is a line that is a valid event by itself
        n = d["cause"]["source"]["line"]
        assert n not in dead_lines and n not in poison
        parse_event(expected[n], LIMITS)
    for d in dead:
        n = d["source"]["line"]
        size = len(expected[n])
        if size > LIMITS.max_event_bytes:
            assert d["reason"] == f"event of {size} bytes exceeds the limit of {LIMITS.max_event_bytes} bytes"
            assert d["original_bytes"] == size and d["truncated"] is True


@pytest.mark.parametrize("seed", range(4))
def test_parse_event_rejects_random_bytes_with_invalid_event_only(seed: int) -> None:
    rng = random.Random(seed)
    valid = json.dumps({"group": "g", "type": "join", "member": "m", "topics": ["t"]}).encode()
    for _ in range(2000):
        value = bytearray(rng.choice([valid, b"{}", b"[]", b'{"group": "g"}']))
        for _ in range(rng.randrange(1, 4)):  # mutate: flip, insert, delete
            op, i = rng.randrange(3), rng.randrange(len(value) + 1)
            if op == 0 and i < len(value):
                value[i] = rng.randrange(256)
            elif op == 1:
                value[i:i] = bytes([rng.randrange(256)])
            elif i < len(value):
                del value[i]
        try:
            parse_event(bytes(value), LIMITS)
        except InvalidEvent as exc:
            assert exc.reason and "\n" not in exc.reason


def test_deep_nesting_and_giant_numbers_are_invalid_events() -> None:
    for value in (b"[" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000):
        with pytest.raises(InvalidEvent, match=r"^invalid JSON: nested too deeply$"):
            parse_event(value, Limits())
    with pytest.raises(InvalidEvent, match=r"^invalid JSON: integer of 5000 digits$"):
        parse_event(b'{"group": "g", "type": "partitions", "partitions": {"t": ' + b"9" * 5000 + b"}}", Limits())

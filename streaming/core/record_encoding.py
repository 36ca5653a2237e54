"""Output records' bytes (docs/events-and-diffs.md): a diff record in size-bounded parts, a dead letter, and the
one JSON encoding of both.

Records are serialised with a fixed field order and compact separators, so that the same event log gives
byte-identical records (except `emitted_ts`) however the stream was batched.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import orjson

from streaming.core.changes import Changes

_EMPTY_ENTRY = b'{"assigned":{},"revoked":{}}'
_PART_FIELDS = 48  # room for ',"part":NNNNNN,"parts":NNNNNN'
_WHOLE_PARTITIONS = 8_192  # up to this many listed partitions a record is encoded whole first (not member by member)


# the record format (`_text` writes it with orjson, this encoder takes what orjson refuses); records are trees of
# fresh dicts and lists, so the encoder's check for circular references only costs
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)


# a diff record's `phase`: eager (all held partitions paused), incremental (KIP-848: only what moves),
# a cooperative revoke round and its follow-ups, or a static member's replacement (no round)
PHASES = ("eager", "incremental", "revoke", "followup", "replace")


def dumps(obj: Any) -> bytes:
    """`obj` as the standard encoder with the settings above writes it, in UTF-8 (`_text`), copied to its exact
    size: orjson's result keeps the whole buffer it grew (≈ 4 KiB for a 1 KB record: 140 against 21 MiB for
    18,000 records held, measured with orjson 3.13), and outputs are held a micro-batch long (two slices joined:
    orjson never writes an empty text)."""
    text = _text(obj)
    return text[:-1] + text[-1:]


def _text(obj: Any) -> bytes:
    """`obj` as the standard encoder with the settings above writes it, in UTF-8, maybe in a larger buffer.

    orjson writes the same bytes for what records hold — strings (escapes included), integers, lists, dicts,
    None, booleans; checked by tests/core/test_record_encoding.py — in ≈ 0.8 instead of 6.7 µs for a bench diff
    record of ~520 bytes (the encoder was ≈ 13 % of a range + roundrobin replay's instructions). What it
    refuses (integers past 64 bits, keys that are not strings, lone surrogates, ...) goes to the standard
    encoder, which writes or raises as before. Floats are the one type the two write differently (`1e-07`
    against `1e-7`, the same double either way); the load fields of a group with traffic carry them
    (docs/events-and-diffs.md §2), and which encoder writes a record depends on the record alone; `stopped_ms`'s
    half milliseconds both spell alike (`2.5`; both tested), and `lag_added` is a load field's kind of number."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return _ENCODER.encode(obj).encode("utf-8")


def diff_records(head: dict[str, Any], changes: Changes, metrics: dict[str, Any], event_ts: int | None,
                 emitted_ts: int, max_bytes: int) -> list[bytes]:
    """One diff record `head + changes + metrics + event_ts + emitted_ts`, split into parts of at most `max_bytes`
    if needed.

    Every part repeats `head` and the tail (the metrics and both times) and carries a share of `changes`, whole
    members where they fit; a member too big for one part is spread over consecutive parts. The JSON is assembled
    from each member's serialised entry, so a million-partition diff is serialised once. `metrics` carries the
    round's `assigned` and `revoked`, the numbers of (member, partition) entries in `changes`.
    """
    if metrics["assigned"] + metrics["revoked"] <= _WHOLE_PARTITIONS:  # the usual small record: three texts
        # joined (head and metrics are not empty and share no keys), where one dict of every field grew its table
        # twice; the join is exact-sized
        whole = b"".join((_text(head)[:-1], b',"changes":', _text(changes), b",", _text(metrics)[1:-1],
                          b',"event_ts":', b"null" if event_ts is None else str(event_ts).encode(),
                          b',"emitted_ts":', str(emitted_ts).encode(), b"}"))
        if len(whole) <= max_bytes:
            return [whole]
    tail = {**metrics, "event_ts": event_ts, "emitted_ts": emitted_ts}
    prefix = dumps(head)[:-1] + b',"changes":{'
    entries = [dumps(member) + b":" + dumps(sides) for member, sides in changes.items()]
    whole = prefix + b",".join(entries) + b"}," + dumps(tail)[1:]
    if len(whole) <= max_bytes:
        return [whole]
    budget = max_bytes - len(prefix) - len(dumps(tail)) - _PART_FIELDS
    if budget < 1_024:
        raise ValueError(f"diff record fields alone leave no room for changes under {max_bytes} bytes")
    parts: list[list[bytes]] = [[]]
    used = 0
    for (member, sides), entry in zip(changes.items(), entries, strict=True):
        for k, piece in enumerate([entry] if len(entry) < budget else _member_pieces(member, sides, budget)):
            # a member's next piece opens a part: two pieces of one member in a part would repeat its key
            if (k or used + len(piece) + 1 > budget) and parts[-1]:
                parts.append([])
                used = 0
            parts[-1].append(piece)
            used += len(piece) + 1
    return [prefix + b",".join(part) + b"}," + dumps({**tail, "part": i, "parts": len(parts)})[1:]
            for i, part in enumerate(parts, 1)]


def _member_pieces(member: str, sides: dict[str, dict[str, list[int]]], budget: int) -> list[bytes]:
    """A member's entry cut into serialised entries of at most `budget` bytes each (`diff_records` gives each
    piece after the first a part of its own, so no part holds the same member twice)."""
    shell = len(dumps(member)) + len(_EMPTY_ENTRY) + 2
    pieces: list[bytes] = []
    piece: dict[str, dict[str, list[int]]] = {"assigned": {}, "revoked": {}}
    used = shell
    for side, topics in sides.items():
        for topic, numbers in topics.items():
            name_cost = len(dumps(topic)) + 4  # '"t":[...],'
            per_number = len(str(max(numbers))) + 1 if numbers else 1
            start = 0
            while start < len(numbers):
                take = min(len(numbers) - start, (budget - used - name_cost) // per_number)
                if take <= 0:
                    if used == shell:
                        raise ValueError(f"names of {member!r} / {topic!r} too long for one record")
                    pieces.append(dumps(member) + b":" + dumps(piece))
                    piece, used = {"assigned": {}, "revoked": {}}, shell
                    continue
                piece[side].setdefault(topic, []).extend(numbers[start:start + take])
                used += name_cost + take * per_number
                start += take
    if used > shell:
        pieces.append(dumps(member) + b":" + dumps(piece))
    return pieces


def dead_letter_record(
    *,
    group: str | None,
    reason: str,
    source: dict,
    original: bytes | None,
    event_ts: int | None,
    emitted_ts: int,
    max_bytes: int,
    original_bytes: int | None = None,
) -> bytes:
    """A dead letter: reason, original bytes (UTF-8 text, else base64) and where they came from.

    An original too large for one record is cut to a prefix, with `original_bytes` giving its full size;
    `original_bytes` is passed in when `original` is already a prefix (an over-long line, `core.lines`).
    """
    record: dict[str, Any] = {"group": group, "reason": reason, "source": source,
                              "event_ts": event_ts, "emitted_ts": emitted_ts}
    if original is None:
        record["original"] = None
        return dumps(record)
    original = bytes(original)
    size = len(original) if original_bytes is None else max(original_bytes, len(original))
    if size > len(original):
        original = _whole_characters(original)
    room = max_bytes - len(dumps(record)) - 256
    try:
        text = original.decode("utf-8")
    except UnicodeDecodeError:
        cut = original[: max(0, room * 3 // 4)]
        record["original_base64"] = base64.b64encode(cut).decode("ascii")
    else:
        cut_text = text
        while len(dumps(cut_text)) > room:  # JSON escaping can grow text up to 6x; shrink until it fits
            cut_text = cut_text[: len(cut_text) * 2 // 3]
        record["original"] = cut_text
        cut = cut_text.encode("utf-8")
    if len(cut) < size:
        record["original_bytes"] = size
        record["truncated"] = True
    return dumps(record)


def _whole_characters(prefix: bytes) -> bytes:
    """A cut UTF-8 text without the partial character its cut may end in (so it still reads as text)."""
    try:
        prefix.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.end == len(prefix) and len(prefix) - exc.start < 4:
            return prefix[:exc.start]
    return prefix

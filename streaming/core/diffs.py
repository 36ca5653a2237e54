"""Output records (docs/events-and-diffs.md): per-member changes of one round, its metrics, size-bounded serialisation,
and dead letters.

Records are serialised with a fixed field order and compact separators, so that the same event log gives
byte-identical records (except `emitted_ts`) however the stream was batched.
"""

from __future__ import annotations

import base64
import json
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import Any, Final

import numpy as np
import orjson

from assignors.optimality import (
    Counts,
    TopicGroups,
    min_moves_counted,
    min_moves_tallied,
    round_counts,
    topic_subscribers,
)

Changes = dict[str, dict[str, dict[str, list[int]]]]  # member -> {"assigned"|"revoked": {topic: [partitions]}}

_EMPTY_ENTRY = b'{"assigned":{},"revoked":{}}'
_PART_FIELDS = 48  # room for ',"part":NNNNNN,"parts":NNNNNN'
_WHOLE_PARTITIONS = 8_192  # up to this many listed partitions a record is encoded whole first (not member by member)


# the record format (`_text` writes it with orjson, this encoder takes what orjson refuses); records are trees of
# fresh dicts and lists, so the encoder's check for circular references only costs
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)
# compiled, a Final is a C static called at once, where `orjson.dumps` looks up the module, then its attribute
# (three calls a record)
_ORJSON_DUMPS: Final = orjson.dumps


# a diff record's `phase`: eager (all held partitions paused), incremental (KIP-848: only what moves),
# a cooperative revoke round and its follow-ups, or a static member's replacement (no round)
PHASES = ("eager", "incremental", "revoke", "followup", "replace")


def dumps(obj: Any) -> bytes:
    """`obj` as the standard encoder with the settings above writes it, in UTF-8 (`_text`), copied to its exact
    size: orjson's result keeps the whole buffer it grew (≈ 4 KiB for a 1 KB record: 140 against 21 MiB for
    18,000 records held, measured with orjson 3.13), and outputs are held a micro-batch long. Copied as two slices
    joined (orjson never writes an empty text), which compiled are native bytes operations where
    `bytes(memoryview(...))` calls two types."""
    text = _text(obj)
    return text[:-1] + text[-1:]


def _text(obj: Any) -> bytes:
    """`obj` as the standard encoder with the settings above writes it, in UTF-8, maybe in a larger buffer.

    orjson writes the same bytes for what records hold — strings (escapes included), integers, lists, dicts,
    None, booleans; checked by tests/core/test_diffs.py — in ≈ 0.8 instead of 6.7 µs for a bench diff
    record of ~520 bytes (the encoder was ≈ 13 % of a range + roundrobin replay's instructions). What it
    refuses (integers past 64 bits, keys that are not strings, lone surrogates, ...) goes to the standard
    encoder, which writes or raises as before. Floats are the one type the two write differently (`1e-07`
    against `1e-7`, the same double either way); the load fields of a group with traffic carry them
    (docs/events-and-diffs.md §2), and which encoder writes a record depends on the record alone; `stopped_ms`'s
    half milliseconds both spell alike (`2.5`; both tested), and `lag_added` is a load field's kind of number."""
    try:
        return _ORJSON_DUMPS(obj)
    except TypeError:
        return _ENCODER.encode(obj).encode("utf-8")


def member_changes(
    prev_owner: np.ndarray,
    new_owner: np.ndarray,
    member_ids: Sequence[str],
    topic_names: Sequence[str],
    topic_sizes: np.ndarray,
) -> tuple[Changes, int, int]:
    """Per-member assigned/revoked partitions between two owner arrays over the same layout.

    Owners are indices into `member_ids` (-1: nobody); `topic_sizes`: partitions per topic of `topic_names`
    (0: a deleted topic). Members come in `member_ids` order, topics in layout order, partitions ascending.
    Returns (changes, assigned count, revoked count). One pass over the changed partitions (ascending, so
    topics come in layout order and partitions ascending), each side collected per member (`_Side`).
    """
    changed = (prev_owner != new_owner).nonzero()[0]
    bounds: list[int] = [0, *accumulate(topic_sizes.tolist())]
    assigned, revoked = _Side(len(member_ids)), _Side(len(member_ids))
    end = -1
    name = ""
    first = t = 0
    ids: list[int] = changed.tolist()
    news: list[int] = new_owner[changed].tolist()
    prevs: list[int] = prev_owner[changed].tolist()
    for k, i in enumerate(ids):
        n, p = news[k], prevs[k]
        if i >= end:  # the next topic holding a change
            t = bisect_right(bounds, i) - 1
            end, name, first = bounds[t + 1], topic_names[t], bounds[t]
        if n >= 0:
            assigned.add(n, t, name, i - first)
        if p >= 0:
            revoked.add(p, t, name, i - first)
    out: Changes = {}
    for m, gained in enumerate(assigned.topics):
        lost = revoked.topics[m]
        if gained is not None or lost is not None:
            out[member_ids[m]] = {"assigned": {} if gained is None else gained, "revoked": {} if lost is None else lost}
    return out, assigned.count, revoked.count


class _Side:
    """One side ("assigned" or "revoked") of a round's changes, collected in partition order topic by topic, in
    tables indexed by member; each side keeps its own per-member topics (`member_changes` pairs them)."""

    def __init__(self, members: int) -> None:
        self.count = 0
        self.topic = [-1] * members  # member -> the topic of its list below (-1: none yet)
        self.lists: list[list[int]] = [[]] * members  # member -> its partitions of that topic
        self.topics: list[dict[str, list[int]] | None] = [None] * members  # member -> its topics (None: no change)

    def add(self, member: int, topic: int, name: str, number: int) -> None:
        """Partition `number` of topic `name` (index `topic`)."""
        self.count += 1
        if self.topic[member] == topic:
            self.lists[member].append(number)
            return
        self.topic[member] = topic
        topics = self.topics[member]
        if topics is None:
            topics = self.topics[member] = {}
        self.lists[member] = topics[name] = [number]


def build_metrics(
    prev_owner: np.ndarray,
    new_owner: np.ndarray,
    partition_topic: np.ndarray,
    subscribed: np.ndarray,
    *,
    assigned: int,
    revoked: int,
    paused: int,
    optimality: bool = True,
    counts: Counts | None = None,
    groups: TopicGroups | None = None,
) -> dict[str, int | None]:
    """The metrics of one round (docs/events-and-diffs.md), in record field order.

    `prev_owner`/`new_owner`: int32 per partition of the post-round layout, member index into the
    post-round member list (-1: nobody, or a member that left). `partition_topic`: int32 topic index per
    partition; `subscribed`: bool[members, topics]. `assigned`/`revoked`/`paused` are counted by the caller
    over the changes (they include partitions of departed members and deleted topics).
    `moves`: partitions taken from a member that is still in the group (given to another or withheld);
    `min_moves`: the fewest moves any assignment with the same per-member loads could have made
    (`assignors.optimality`), so `moves - min_moves` is the movement the strategy chose to spend; None
    when `optimality` is off (it solves a small min-cost flow per round when subscriptions differ).
    Every value follows from the round's `round_counts` (`counts`, for a caller that counted them already)
    tallied over `subscribed`'s topic groups (`groups`, for a caller that keeps them over the event's rounds).
    """
    shape: tuple[int, int] = subscribed.shape
    members, num_topics = shape
    if counts is None:
        counts = round_counts(prev_owner, new_owner, partition_topic)
    if groups is None:
        groups = TopicGroups(topic_subscribers(subscribed), members)
    tally = groups.tally(counts, num_topics)
    load, size, _, _, moved, unassigned, outside = tally
    partitions = 0
    for count in size:
        partitions += count
    least = None
    if optimality:  # 0 <= min_moves <= moves, so no moves needs no solving
        if not moved:
            least = 0
        elif outside:  # the strategy gave a partition to a non-subscriber: that pair counts as allowed
            least = min_moves_counted(counts, subscribed, groups)
        else:
            least = min_moves_tallied(groups, tally)
    load_min = load_max = load[0] if members else 0
    for count in load:
        if count < load_min:
            load_min = count
        elif count > load_max:
            load_max = count
    return {
        "members": members,
        "partitions": partitions,
        "assigned": assigned,
        "revoked": revoked,
        "unassigned": unassigned,
        "paused": paused,
        "load_min": load_min,
        "load_max": load_max,
        "moves": moved,
        "min_moves": least,
    }


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

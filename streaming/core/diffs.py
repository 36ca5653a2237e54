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
from itertools import accumulate, pairwise
from typing import Any, Final, NoReturn

import numpy as np
import orjson

from assignors.optimality import (
    Counts,
    TopicGroups,
    min_moves,
    min_moves_counted,
    min_moves_tallied,
    moves,
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

    Owners are indices into `member_ids` (-1: nobody). Members come in `member_ids` order, topics in
    layout order, partitions ascending. Returns (changes, assigned count, revoked count).
    """
    changed = (prev_owner != new_owner).nonzero()[0]
    if changed.size <= _FEW_CHANGES:
        return _few_member_changes(changed, prev_owner, new_owner, member_ids, topic_names, topic_sizes)
    starts = np.zeros(len(topic_sizes) + 1, dtype=np.int64)
    np.cumsum(topic_sizes, out=starts[1:])
    sides = {}
    for side, owner in (("assigned", new_owner), ("revoked", prev_owner)):
        ids = changed[owner[changed] >= 0]
        who = owner[ids]
        order = np.argsort(who, kind="stable")
        sides[side] = (ids[order], who[order])
    out: Changes = {}
    members_touched = np.union1d(sides["assigned"][1], sides["revoked"][1])
    for m in members_touched.tolist():
        out[member_ids[m]] = {"assigned": {}, "revoked": {}}
    for side, (ids, who) in sides.items():
        if ids.size == 0:
            continue
        topic = np.searchsorted(starts, ids, side="right") - 1
        number = ids - starts[topic]
        # runs of equal (member, topic): ids are ascending within a member, so topics come in layout order
        run_start = np.flatnonzero(np.concatenate([[True], (who[1:] != who[:-1]) | (topic[1:] != topic[:-1])]))
        run_end = np.append(run_start[1:], ids.size)
        run_topic = [topic_names[t] for t in topic[run_start].tolist()]
        number_l = number.tolist()
        lists = list(map(number_l.__getitem__, map(slice, run_start.tolist(), run_end.tolist())))
        member_start = np.flatnonzero(np.concatenate([[True], who[run_start][1:] != who[run_start][:-1]]))
        for a, b in pairwise([*member_start.tolist(), run_start.size]):
            out[member_ids[who[run_start[a]]]][side] = dict(zip(run_topic[a:b], lists[a:b], strict=True))
    return out, int(sides["assigned"][0].size), int(sides["revoked"][0].size)


_FEW_CHANGES = 256  # up to this, plain Python beats the ~30 numpy calls of the vectorised path (measured)


def _few_member_changes(
    changed: np.ndarray,
    prev_owner: np.ndarray,
    new_owner: np.ndarray,
    member_ids: Sequence[str],
    topic_names: Sequence[str],
    topic_sizes: np.ndarray,
) -> tuple[Changes, int, int]:
    """`member_changes` for a few changed partitions (the usual small-group round), same output: one pass
    over the changed ids (ascending, so topics come in layout order and partitions ascending)."""
    bounds: list[int] = [0, *accumulate(topic_sizes.tolist())]
    assigned, revoked = _Side(len(member_ids)), _Side(len(member_ids))
    end = -1
    name = ""
    first = t = 0
    # typed lists and an index loop: compiled, the owners stay native ints (a `zip(strict=True)` yields objects)
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
    return _in_member_order(assigned, revoked, member_ids), assigned.count, revoked.count


class _Side:
    """One side ("assigned" or "revoked") of a round's changes, collected in partition order topic by topic, in
    tables indexed by member: a change costs list reads where a lookup keyed by member boxes its key. Each side
    keeps its own per-member topics (`_in_member_order` pairs them), so a new topic reads no entry by key."""

    def __init__(self, members: int) -> None:
        self.count = 0
        self.topic = [-1] * members  # member -> the topic of its list below (-1: none yet)
        self.lists: list[list[int]] = [[]] * members  # member -> its partitions of that topic
        self.topics: list[dict[str, list[int]] | None] = [None] * members  # member -> its topics (None: no change)

    def add(self, member: int, topic: int, name: str, number: int) -> None:
        """Partition `number` of topic `name` (any index that tells the round's topics apart: `topic`)."""
        self.count += 1
        if self.topic[member] == topic:
            self.lists[member].append(number)
            return
        self.topic[member] = topic
        topics = self.topics[member]
        if topics is None:
            topics = self.topics[member] = {}
        # made empty, then appended to: its first append allocates room for four, where `[number]` allocates one
        # and grows at the second (most lists hold two to four partitions: a reallocation spared)
        numbers: list[int] = []
        numbers.append(number)
        self.lists[member] = topics[name] = numbers


def _in_member_order(assigned: _Side, revoked: _Side, member_ids: Sequence[str]) -> Changes:
    """The changed members' entries by id, in member order, each with both sides."""
    ids = member_ids if isinstance(member_ids, list) else list(member_ids)  # compiled, a list is read natively
    out: Changes = {}
    lost_by_member = revoked.topics
    for m, gained in enumerate(assigned.topics):
        lost = lost_by_member[m]
        if gained is not None or lost is not None:
            out[ids[m]] = {"assigned": {} if gained is None else gained, "revoked": {} if lost is None else lost}
    return out


def small_round(prev_owner: np.ndarray, new_owner: np.ndarray, member_ids: Sequence[str], topic_names: Sequence[str],
                sizes: list[int], present: int) -> tuple[Changes, int, int, Counts]:
    """`member_changes` and `round_counts` of a small round (at most `SMALL_ROUND` partitions) whose changes and
    metrics are over the same partitions, in one pass: both walked the same two arrays, each converting them to
    lists (with the changed ids, ~35 % of a range + roundrobin loop's bookkeeping). `sizes`: partitions per topic
    in layout order (0: deleted, no live index). `present`: the members still in the group; a higher index is a
    member that left (the union layout of a first round), nobody for the counts as in the new layout. Same
    results as the two functions.

    A topic's (previous, new owner) pairs are tallied per run of equal owners (Range hands out runs), a member
    that left counted as nobody at once, so each pair is one triple of the topic, stored once, first seen first
    (the `Counts` `round_counts` gives)."""
    prevs: list[int] = prev_owner.tolist()
    news: list[int] = new_owner.tolist()
    if not len(prevs) == len(news) == sum(sizes):
        raise ValueError("small_round: owner arrays and topic sizes of different lengths")
    members = len(member_ids)
    width = members + 1  # a pair counted under one int, owners shifted to 0..members
    tally = [0] * (width * width if width * width <= _DENSE_PAIRS else 0)  # few members: pairs tallied in a list
    seen: list[int] = []  # the pairs tallied in the current topic, first seen first
    sparse: dict[int, int] = {}  # else in a dict
    counts: Counts = []
    assigned, revoked = _Side(members), _Side(members)
    first = 0
    live = -1
    for t, size in enumerate(sizes):
        if not size:
            continue
        live += 1
        name = topic_names[t]
        end = first + size
        last_p, last_n, run = prevs[first], news[first], 0
        if not (-1 <= last_p < members and -1 <= last_n < members):  # compared inline: a call per run costs more
            _bad_owners(members)
        for i in range(first, end):
            p, n = prevs[i], news[i]
            if p != last_p or n != last_n:
                _count_run(tally, seen, sparse, (last_p + 1 if last_p < present else 0) * width + last_n + 1, run)
                if not (-1 <= p < members and -1 <= n < members):
                    _bad_owners(members)
                last_p, last_n, run = p, n, 0
            run += 1
            if p == n:
                continue
            if n >= 0:
                assigned.add(n, live, name, i - first)
            if p >= 0:
                revoked.add(p, live, name, i - first)
        _count_run(tally, seen, sparse, (last_p + 1 if last_p < present else 0) * width + last_n + 1, run)
        for pair in seen:  # the topic's tally, emptied for the next
            counts.append(live)
            counts.append(pair // width - 1)
            counts.append(pair % width - 1)
            counts.append(tally[pair])
            tally[pair] = 0
        seen.clear()
        for pair, count in sparse.items():
            counts.append(live)
            counts.append(pair // width - 1)
            counts.append(pair % width - 1)
            counts.append(count)
        sparse.clear()
        first = end
    return _in_member_order(assigned, revoked, member_ids), assigned.count, revoked.count, counts


_DENSE_PAIRS = 1_024  # up to this many (previous, new owner) pairs (31 members), `small_round` tallies in a list


def _bad_owners(members: int) -> NoReturn:
    """Owners are member indices or -1 (nobody)."""
    raise ValueError(f"small_round: member indices must be in [-1, {members})")


def _count_run(tally: list[int], seen: list[int], sparse: dict[int, int], pair: int, run: int) -> None:
    """Counts a run of partitions under `pair`: in `tally` when it has room for every pair, `seen` listing the
    pairs first tallied, else in `sparse`."""
    if not tally:
        sparse[pair] = sparse.get(pair, 0) + run
        return
    tallied = tally[pair]
    if not tallied:
        seen.append(pair)
    tally[pair] = tallied + run


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
    `counts`: the round's `round_counts`, for a caller that counted them already; `groups`: `subscribed`'s
    topic groups, for a caller that keeps them over the event's rounds (a small round reads them).
    """
    members = subscribed.shape[0]
    if prev_owner.size <= SMALL_ROUND:
        if counts is None:
            counts = round_counts(prev_owner, new_owner, partition_topic)
        if groups is None:
            groups = TopicGroups(topic_subscribers(subscribed), members)
        return _small_metrics(counts, subscribed, groups, assigned=assigned, revoked=revoked, paused=paused,  # type: ignore[arg-type]
                              optimality=optimality)
    topic_subscribed = subscribed.any(axis=0) if members else np.zeros(subscribed.shape[1], dtype=bool)
    in_subscribed = topic_subscribed[partition_topic] if partition_topic.size else np.zeros(0, dtype=bool)  # type: ignore[index]
    load = np.bincount(new_owner[new_owner >= 0], minlength=members) if members else np.zeros(0, dtype=np.int64)
    moved = moves(prev_owner, new_owner)
    least = None
    if optimality:  # 0 <= min_moves <= moves, so no moves needs no solving
        least = min_moves(prev_owner, new_owner, partition_topic, subscribed) if moved else 0
    return {
        "members": members,
        "partitions": int(in_subscribed.sum()),
        "assigned": assigned,
        "revoked": revoked,
        "unassigned": int((in_subscribed & (new_owner < 0)).sum()),
        "paused": paused,
        "load_min": int(load.min()) if members else 0,
        "load_max": int(load.max()) if members else 0,
        "moves": moved,
        "min_moves": least,
    }


SMALL_ROUND = 256  # up to this many partitions, metrics come from one count in Python (numpy calls cost more)


def round_counts(prev_owner: np.ndarray, new_owner: np.ndarray,
                 partition_topic: np.ndarray) -> Counts | None:
    """A small round's partitions counted by (topic, previous owner, new owner) in one pass
    (`assignors.optimality.Counts`); None for a round of more than `SMALL_ROUND` partitions. Every metric of a
    small round follows from these few distinct triples, and so does which members got a topic they do not
    subscribe to (`streaming.core.rounds`), so a round counts them once for both."""
    if prev_owner.size > SMALL_ROUND:
        return None
    topics: list[int] = partition_topic.tolist()
    prevs: list[int] = prev_owner.tolist()
    news: list[int] = new_owner.tolist()
    if not len(topics) == len(prevs) == len(news):
        raise ValueError("round_counts: arrays of different lengths")
    if not topics:
        return []
    # Each triple is counted under one int, its owners shifted to 0.. and written in base `width`: compiled, an
    # int key costs a fraction of a tuple's allocation, hashing and comparing (measured: the tuple-keyed count was
    # 16 % of a range + roundrobin loop); the few distinct keys become triples again, in first-seen order.
    low, high = _span(prevs, prevs[0], prevs[0])
    low, high = _span(news, low, high)
    width = high - low + 1
    counts: dict[int, int] = {}
    last, run = -1, 0  # consecutive partitions often share their triple (Range hands out runs): counted at once
    for i, t in enumerate(topics):
        key = (t * width + prevs[i] - low) * width + news[i] - low
        if key == last:
            run += 1
            continue
        if run:
            counts[last] = counts.get(last, 0) + run
        last, run = key, 1
    counts[last] = counts.get(last, 0) + run
    triples: Counts = []
    for key, count in counts.items():
        rest = key // width
        triples += (rest // width, rest % width + low, key % width + low, count)
    return triples


def _span(values: list[int], low: int, high: int) -> tuple[int, int]:
    """The least and the greatest of `values`, `low` and `high` (compiled, this loop compares native ints where
    `min` and `max` compare objects)."""
    for v in values:
        if v < low:
            low = v
        elif v > high:
            high = v
    return low, high


def _small_metrics(counts: Counts, subscribed: np.ndarray, groups: TopicGroups, *, assigned: int, revoked: int,
                   paused: int, optimality: bool) -> dict[str, int | None]:
    """`build_metrics` of a small round, same values, from its `round_counts`: one pass over the distinct
    triples tallies them by topic group (`groups`, kept over an event's rounds), which gives the metrics and
    `min_moves`' tables at once."""
    shape: tuple[int, int] = subscribed.shape
    members, num_topics = shape
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
    load_min = load_max = load[0] if members else 0  # compiled, native compares (`min` and `max` are calls)
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

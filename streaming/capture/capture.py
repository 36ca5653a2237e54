"""`rebalance capture`: tail the offsets topic (or poll DescribeGroups), translate, write events
(docs/events-and-diffs.md §1).

The offsets topic is read from its earliest offset with the group-less read_committed consumer (aborted
transactional offset commits never count; no offsets of ours are stored anywhere); `--once` reads up to the
end offsets taken at start. Records go through `streaming.capture.coordinator_events.Translator` in offset
order per partition (all of a group's records share a partition, so per-group order is kept). Partition
counts come from Metadata requests, asked once per topic and re-asked for every known topic each poll
interval, so that a later partition increase or deletion becomes a `partitions` / `delete_topic` event.

`--source describe` polls ListGroups every poll interval, for clusters whose offsets topic is not readable:
DescribeGroups for classic groups (a Stable or Empty group whose members or assignments differ from the
last poll, or that an earlier poll saw rebalancing, becomes a `generation` event numbered by the capture,
with the rebalance's observed duration), ConsumerGroupDescribe for KIP-848 consumer groups where the
cluster has it (one `generation` event per target-assignment epoch seen; `streaming.capture.group_client`);
a group that disappeared becomes a `delete_group`. It only sees what is there at each poll.

`--events-topic`: each poll's events go to the events topic (keyed by group, Kafka's default partitioning)
together with a marker holding the offsets-topic positions they came from, in ONE transaction
(`streaming.kafka.transactions`, the Spark sink's pattern); a restarted capture resumes from the last
committed marker, so a `read_committed` reader sees every event once.

Restart of a file capture: when the output file already holds events, it is read back first; the records
up to the last captured position of each partition are replayed into the translator (to rebuild its
state) without writing their events again, so nothing is lost or repeated - as long as compaction has not
removed records in between (compaction of the offsets topic keeps only the latest record per key).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

from streaming.capture.coordinator_events import Event, Translator, Undecodable
from streaming.capture.coordinator_records import MemberMetadata
from streaming.capture.group_client import describe_consumer_groups, list_groups
from streaming.capture.group_messages import ListedGroup
from streaming.capture.traffic_poll import TrafficPoll
from streaming.capture.wire import kafka_topic_id
from streaming.core.config import Limits
from streaming.kafka.consumer import committed_consumer
from streaming.kafka.loader import DEFAULT_PARTITIONS
from streaming.kafka.options import to_kafka_python
from streaming.kafka.topics import ensure_topics
from streaming.kafka.transactions import last_marker, write_batch

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_EVENT_LIMIT = Limits().max_event_bytes
MARKER_TOPIC = "rebalance.capture-markers"  # --events-topic: one marker per committed batch, per capture


@dataclass
class CaptureSettings:
    bootstrap: str
    offsets_topic: str = "__consumer_offsets"
    groups: re.Pattern[str] | None = None
    once: bool = False
    poll_interval: float = 5.0
    strict: bool = False
    kafka_options: Mapping[str, str] = field(default_factory=dict)
    traffic_interval: float | None = None  # --traffic-interval: `rates` traffic events (streaming.capture.traffic_poll)

    def traffic_poll(self) -> TrafficPoll | None:
        if self.traffic_interval is None:
            return None
        return TrafficPoll(self.traffic_interval, {**self.kafka_options, "bootstrap.servers": self.bootstrap})


class EventsTopic:
    """`--events-topic`: transactional batches of events with an offsets-position marker (see the module doc)."""

    def __init__(self, settings: CaptureSettings, topic: str, marker_topic: str,
                 partitions: int = DEFAULT_PARTITIONS) -> None:
        self.client_options = {**settings.kafka_options, "bootstrap.servers": settings.bootstrap}
        self.topic, self.marker_topic = topic, marker_topic
        self.writer_id = f"rebalance-capture-{settings.offsets_topic}-{topic}"
        ensure_topics(settings.bootstrap, {topic: partitions, marker_topic: 1}, kafka_options=settings.kafka_options)
        last = last_marker(self.client_options, marker_topic, self.writer_id.encode())
        self.batch = -1 if last is None else int(last["batch"])
        self.positions = {} if last is None else {int(p): int(o) for p, o in last["positions"].items()}

    def write(self, events: list[Event], positions: Mapping[int, int]) -> None:
        """Commits `events` and the positions reached (cumulative) in one transaction; nothing if no events."""
        self.positions.update(positions)
        if not events:
            return
        self.batch += 1
        records = [(self.topic, ev["group"].encode("utf-8"), _ENCODER.encode(ev).encode("utf-8")) for ev in events]
        write_batch(self.client_options, self.writer_id, self.batch, lambda: records, self.marker_topic,
                    {"events": len(events), "positions": self.positions})


class CaptureFailed(RuntimeError):
    """The capture cannot go on (the offsets topic is missing or unreadable, `--strict` on a bad record)."""


class TopicMetadata:
    """Partition counts from Metadata requests (never auto-creating a topic); None = the topic does not exist.
    Also topic id -> name, for KIP-848 records whose group has no PartitionMetadata record (Kafka 4.1+ stopped
    writing it, KIP-1101): one Metadata request for all topics per unknown id, misses remembered."""

    def __init__(self, admin: KafkaAdminClient) -> None:
        self.admin = admin
        self.counts: dict[str, int | None] = {}
        self.names: dict[str, str | None] = {}

    def name_of_id(self, topic_id: str) -> str | None:
        if topic_id not in self.names:
            self.names[topic_id] = None
            for t in self.admin.describe_topics():
                if t.get("topic_id") is not None and t.get("error_code", 0) == 0:
                    self.names[kafka_topic_id(t["topic_id"])] = t["name"]
        return self.names[topic_id]

    def count(self, topic: str) -> int | None:
        if topic not in self.counts:
            self.counts.update(self._describe([topic]))
        return self.counts[topic]

    def refresh(self) -> dict[str, int | None]:
        """Re-asks every topic seen so far; returns those whose count changed."""
        if not self.counts:
            return {}
        fresh = self._describe(list(self.counts))
        changed = {t: n for t, n in fresh.items() if self.counts.get(t) != n}
        self.counts.update(fresh)
        return changed

    def _describe(self, topics: list[str]) -> dict[str, int | None]:
        out: dict[str, int | None] = dict.fromkeys(topics)
        for t in self.admin.describe_topics(topics):
            if t.get("error_code", 0) == 0 and t.get("partitions"):
                out[t["name"]] = len(t["partitions"])
        return out


def written_events(path: Path) -> list[Event]:
    """The events an earlier capture wrote to `path` (none if it does not exist); a torn last line (the
    previous run died mid-write) is cut off the file."""
    if not path.exists():
        return []
    data = path.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep != len(data):
        with open(path, "r+b") as f:
            f.truncate(keep)
    return [json.loads(line) for line in data[:keep].splitlines() if line.strip()]


def written_positions(events: Iterable[Event]) -> dict[int, int]:
    """Per offsets-topic partition, the last record position the events of an earlier capture came from."""
    positions: dict[int, int] = {}
    for ev in events:
        source = ev.get("source")
        if source:
            positions[source["partition"]] = max(positions.get(source["partition"], -1), source["offset"])
    return positions


def capture_offsets(settings: CaptureSettings, out: IO[str] | EventsTopic, progress: IO[str] | None = None,
                    resume: Mapping[int, int] | None = None,
                    stop: Callable[[], bool] = lambda: False) -> Translator:
    """Runs the capture until `--once` is satisfied or `stop()`; returns the translator (its stats). An
    `EventsTopic` output resumes from its own last committed positions (`resume` is for files)."""
    progress = progress or sys.stderr
    base = {**settings.kafka_options, "bootstrap.servers": settings.bootstrap}
    consumer = committed_consumer(base, allow_auto_create_topics=False)
    admin = KafkaAdminClient(**to_kafka_python(base, "admin"))
    traffic = settings.traffic_poll()
    try:
        metadata = TopicMetadata(admin)
        translator = Translator(settings.offsets_topic, settings.groups, metadata.count, metadata.name_of_id)
        if isinstance(out, EventsTopic):
            resume = out.positions
        _run(settings, consumer, metadata, translator, out, progress, dict(resume or {}), stop, traffic)
        return translator
    finally:
        consumer.close()
        admin.close()
        if traffic is not None:
            traffic.close()


def _run(settings: CaptureSettings, consumer: KafkaConsumer, metadata: TopicMetadata, translator: Translator,
         out: IO[str] | EventsTopic, progress: IO[str], resume: dict[int, int], stop: Callable[[], bool],
         traffic: TrafficPoll | None = None) -> None:
    topic = settings.offsets_topic
    parts = consumer.partitions_for_topic(topic)
    if not parts:
        raise CaptureFailed(f"topic {topic!r} does not exist or is not readable (needs Describe + Read on it)")
    tps = [TopicPartition(topic, p) for p in sorted(parts)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    backlog = consumer.end_offsets(tps)  # what the topic held at start
    end = backlog if settings.once else {}
    last_poll = time.monotonic()
    last_report = 0.0
    while not stop():
        if backlog and all(consumer.position(tp) >= backlog[tp] for tp in tps):
            backlog = {}
            _hint_without_groups(translator, topic, progress)
        if settings.once and all(consumer.position(tp) >= end[tp] for tp in tps):
            break
        batch = consumer.poll(timeout_ms=int(min(settings.poll_interval, 1.0) * 1000))
        events: list[Event] = []
        reached: dict[int, int] = {}
        for tp, records in sorted(batch.items(), key=lambda kv: kv[0].partition):
            for rec in records:
                got = translator.record(rec.key, rec.value, tp.partition, rec.offset, rec.timestamp)
                if isinstance(got, Undecodable):
                    print(f"capture: undecodable record at {topic}/{got.partition}@{got.offset}: {got.reason}",
                          file=progress, flush=True)
                    if settings.strict:
                        _emit(out, events, reached, progress)  # what came before the bad record
                        raise CaptureFailed(f"undecodable record at {topic}/{got.partition}@{got.offset} (--strict)")
                elif rec.offset > resume.get(tp.partition, -1):
                    events.extend(got)
                reached[tp.partition] = rec.offset
        now = time.monotonic()
        if not settings.once and now - last_poll >= settings.poll_interval:
            last_poll = now
            events.extend(translator.metadata(metadata.refresh(), int(time.time() * 1000)))
        if traffic is not None and not settings.once and (traffic.last is not None or _at_end(consumer, tps, batch)):
            events.extend(traffic.poll(translator.state))  # sampled once the history is read: traffic is now
        _emit(out, events, reached, progress)
        if now - last_report >= 5.0:
            last_report = now
            _report(translator, progress, consumer, tps, end)
    if traffic is not None and settings.once:
        _emit(out, traffic.final(translator.state), {}, progress)
    _report(translator, progress, consumer, tps, end)


def _at_end(consumer: KafkaConsumer, tps: list[TopicPartition], batch: Mapping[Any, Any]) -> bool:
    """The offsets topic is read up to its end offsets (asked only after a poll that returned nothing)."""
    return not batch and all(consumer.position(tp) >= e for tp, e in consumer.end_offsets(tps).items())


def _hint_without_groups(translator: Translator, topic: str, progress: IO[str]) -> None:
    """Once the records the topic held at start are read: a topic without any group's record says so and
    what to use instead (brokers that keep their groups elsewhere, the local noida-db among them)."""
    s = translator.stats
    if not translator.state and not s["generation_events"] and not s["filtered_groups"]:
        print(f"capture: {topic} holds no group records ({s['records']} records read); if this broker keeps "
              "its groups elsewhere, capture with --source describe (polls DescribeGroups)", file=progress,
              flush=True)


def _emit(out: IO[str] | EventsTopic, events: list[Event], reached: Mapping[int, int], progress: IO[str]) -> None:
    """One poll's events to the file or the events topic (with the positions they got to)."""
    if isinstance(out, EventsTopic):
        _check_sizes(events, [_ENCODER.encode(ev) for ev in events], progress)
        out.write(events, {p: o for p, o in reached.items() if o > out.positions.get(p, -1)})
    else:
        _write(out, events, progress)


def _check_sizes(events: list[Event], encoded: list[str], progress: IO[str] | None) -> None:
    for ev, text in zip(events, encoded, strict=True):
        size = len(text.encode("utf-8"))
        if size > _EVENT_LIMIT:  # written anyway: the limit is the pipeline's and can be raised there
            print(f"capture: the {ev['type']} event of group {ev['group']!r} is {size} bytes, above the "
                  f"{_EVENT_LIMIT}-byte event limit of replay/serve (Limits.max_event_bytes)",
                  file=progress or sys.stderr, flush=True)


def _write(out: IO[str], events: list[Event], progress: IO[str] | None = None) -> None:
    lines = [_ENCODER.encode(ev) + "\n" for ev in events]
    _check_sizes(events, [line[:-1] for line in lines], progress)
    if lines:
        out.write("".join(lines))
        out.flush()


def _report(translator: Translator, progress: IO[str], consumer: KafkaConsumer, tps: list[TopicPartition],
            end: Mapping[TopicPartition, int]) -> None:
    s = translator.stats
    behind = sum(max(end[tp] - consumer.position(tp), 0) for tp in tps) if end else None
    print(f"capture: {s['records']} records read{'' if behind is None else f', {behind} to go'}; "
          f"{s['generation_events']} generations in {len(translator.state)} groups; skipped: "
          f"{s['offset_commits']} offset commits, {s['non_consumer_groups']} non-consumer group records, "
          f"{s['other_record_types']} other record types, {s['undecodable']} undecodable",
          file=progress, flush=True)


class _RawDescribeAdmin(KafkaAdminClient):
    """DescribeGroups with the members' protocol bytes left as they came, for our own decoder (kafka-python
    decodes them into its own structs, and not the sticky userData). Overrides a private hook of
    kafka-python (pinned >=3.0.12,<4 in pyproject.toml)."""

    def _describe_groups_process_response(self, response: Any) -> dict[str, Any]:
        return {group.group_id: group for group in response.groups}


def capture_describe(settings: CaptureSettings, out: IO[str], progress: IO[str] | None = None,
                     previous: Iterable[Event] = (), stop: Callable[[], bool] = lambda: False) -> Translator:
    """Polls until `stop()` (`--once`: one poll), continuing after the `previous` events of an earlier run;
    returns the translator (its stats)."""
    progress = progress or sys.stderr
    admin = _RawDescribeAdmin(**to_kafka_python({**settings.kafka_options, "bootstrap.servers": settings.bootstrap},
                                                "admin"))
    traffic = settings.traffic_poll()
    try:
        metadata = TopicMetadata(admin)
        translator = Translator("", settings.groups, metadata.count, metadata.name_of_id, admin.list_topics)
        translator.seed(previous)
        told: set[str] = set()
        while True:
            events, bad = describe_poll(admin, translator, metadata, progress, told)
            if traffic is not None:
                events.extend(traffic.final(translator.state) if settings.once else traffic.poll(translator.state))
            _write(out, events, progress)
            if bad and settings.strict:
                raise CaptureFailed(f"{bad[0]} (--strict)")
            s = translator.stats
            print(f"capture: poll done; {s['generation_events']} generations in {len(translator.state)} groups",
                  file=progress, flush=True)
            if settings.once:
                return translator
            deadline = time.monotonic() + settings.poll_interval
            while time.monotonic() < deadline:
                if stop():
                    return translator
                time.sleep(min(0.2, settings.poll_interval))
    finally:
        admin.close()
        if traffic is not None:
            traffic.close()


def describe_poll(admin: KafkaAdminClient, translator: Translator, metadata: TopicMetadata,
                  progress: IO[str] | None, told: set[str] | None = None) -> tuple[list[Event], list[str]]:
    """One poll: ListGroups on every broker, DescribeGroups for classic groups, ConsumerGroupDescribe for
    consumer-protocol (KIP-848) groups, and a metadata refresh. Returns the events it completes and the
    reasons of the member data and answers that could not be decoded (reported, skipped; `--strict` stops
    on them). Groups that could not be described are reported and skipped. The line saying what the capture
    does instead of describing consumer-protocol groups is printed once per `told` set."""
    now = int(time.time() * 1000)
    bad: list[str] = []
    listing = list_groups(admin)
    if listing.note is not None and listing.note not in (told if told is not None else ()):
        print(f"capture: {listing.note}", file=progress, flush=True)
        if told is not None:
            told.add(listing.note)

    def wanted(g: ListedGroup) -> bool:
        return translator.groups is None or translator.groups.search(g.group_id) is not None

    classic = [g.group_id for g in listing.groups
               if g.protocol_type == "consumer" and g.group_type in (None, "classic") and wanted(g)]
    consumer = [g.group_id for g in listing.groups if g.group_type == "consumer" and wanted(g)]
    # metadata first: a rebalance caused by a partition increase then follows the `partitions` event
    events: list[Event] = translator.metadata(metadata.refresh(), now)
    for group in sorted(set(translator.state) - set(classic) - set(consumer)):
        events.extend(translator.gone(group, now))
    described = admin.describe_groups(classic) if classic else {}
    for group in classic:
        d = described.get(group)
        if d is None or d.error_code or d.protocol_type != "consumer":
            continue  # gone meanwhile: the next poll sees it
        if d.group_state in ("PreparingRebalance", "CompletingRebalance"):
            translator.rebalancing(group, now)  # the next poll that sees it settled times the rebalance
            continue
        if d.group_state not in ("Stable", "Empty"):
            continue
        members = [MemberMetadata(m.member_id, m.group_instance_id, m.client_id, m.client_host, -1, -1,
                                  m.member_metadata, m.member_assignment) for m in d.members]
        got = translator.described(group, d.protocol_data or None, members, now)
        if isinstance(got, Undecodable):
            print(f"capture: undecodable DescribeGroups member data: {got.reason}", file=progress, flush=True)
            bad.append(got.reason)
            continue
        events.extend(got)
    found = describe_consumer_groups(admin, consumer)
    for line in found.skipped:
        print(f"capture: {line}; skipped", file=progress, flush=True)
    for line in found.undecodable:
        print(f"capture: undecodable {line}", file=progress, flush=True)
    bad.extend(found.undecodable)
    for g in found.groups:
        events.extend(translator.consumer_group(g, now))
    return events, bad

"""`rebalance capture --traffic-interval S`: the captured groups' traffic, measured as offset growth
(docs/capture-traffic.md).

Every S seconds the latest (end) offset of every partition of the topics the captured groups subscribe to
is asked for (ListOffsets, `read_uncommitted`: the high watermark); between two such samples a partition
carried `(end offset now - end offset before) / seconds between the samples` messages per second. For each
group and each topic its current members subscribe to, one `rates` traffic event (contract §7) follows,
with one rate per partition of the count the group has been told (the `partitions` events before it), so
a replay accepts it as the group sees the topic.

`rates_events` is the pure part; `TrafficPoll` asks the broker and keeps the last sample. A topic is left
out of an interval when one of its partitions has no earlier sample (new topic, new partition) or its end
offset went down (the topic was deleted and created again): the next interval measures it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka import TopicPartition

from streaming.kafka.options import to_kafka_python

Event = dict[str, Any]
RATE_DECIMALS = 3  # msgs/s are written with at most three decimals: a JSON number a reader parses exactly


@dataclass(frozen=True)
class Sample:
    """End offsets of partitions at one moment (`at`: monotonic seconds, `ts`: epoch ms)."""

    at: float
    ts: int
    ends: Mapping[tuple[str, int], int]


def subscriptions(state: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Per captured group (a `Translator`'s state), its members' subscribed topics -> the partition count
    the group was told; topics without a known count are left out (no rates could be given for them)."""
    out: dict[str, dict[str, int]] = {}
    for group, st in state.items():
        if st.generation is None:
            continue
        topics = dict.fromkeys(t for m in st.members.values() for t in m["topics"])
        counts = {t: st.told[t] for t in topics if st.told.get(t, 0) >= 1}
        if counts:
            out[group] = counts
    return out


def rates_events(groups: Mapping[str, Mapping[str, int]], before: Sample, after: Sample) -> list[Event]:
    """One `rates` traffic event per group and subscribed topic measurable between the two samples."""
    seconds = after.at - before.at
    if seconds <= 0:
        return []
    out: list[Event] = []
    for group in sorted(groups):
        for topic, count in groups[group].items():
            rates = _rates(topic, count, before, after, seconds)
            if rates is not None:
                out.append({"group": group, "type": "traffic", "topic": topic, "rates": rates, "ts": after.ts})
    return out


def _rates(topic: str, count: int, before: Sample, after: Sample, seconds: float) -> list[float] | None:
    rates = []
    for p in range(count):
        start, end = before.ends.get((topic, p)), after.ends.get((topic, p))
        if start is None or end is None or end < start:
            return None
        rates.append(round((end - start) / seconds, RATE_DECIMALS))
    return rates


class TrafficPoll:
    """The broker side: a group-less consumer asking end offsets, and the last sample taken."""

    def __init__(self, interval_s: float, client_options: Mapping[str, str],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self.client_options = dict(client_options)
        self.clock = clock
        self.last: Sample | None = None
        self._consumer: Any = None

    def poll(self, state: Mapping[str, Any]) -> list[Event]:
        """The traffic events due now (none until an interval has passed since the last sample)."""
        if self.last is not None and self.clock() - self.last.at < self.interval_s:
            return []
        return self._measure(subscriptions(state))

    def final(self, state: Mapping[str, Any]) -> list[Event]:
        """`--once`: one interval measured now (a sample, S seconds, another sample), whatever came before."""
        groups = subscriptions(state)
        self.last = None
        self._measure(groups)
        time.sleep(self.interval_s)
        return self._measure(groups)

    def _measure(self, groups: Mapping[str, Mapping[str, int]]) -> list[Event]:
        sample = self._sample(((t, p) for counts in groups.values() for t, n in counts.items() for p in range(n)))
        before, self.last = self.last, sample
        return [] if before is None else rates_events(groups, before, sample)

    def _sample(self, partitions: Iterable[tuple[str, int]]) -> Sample:
        wanted = sorted({TopicPartition(t, p) for t, p in partitions})
        if not wanted:
            return Sample(self.clock(), int(time.time() * 1000), {})
        if self._consumer is None:
            from kafka import KafkaConsumer

            kwargs = to_kafka_python(self.client_options, "consumer")
            # metadata no older than an interval: partitions added since the last sample are asked for
            kwargs.update(enable_auto_commit=False, group_id=None, allow_auto_create_topics=False,
                          metadata_max_age_ms=max(1000, int(self.interval_s * 1000)))
            self._consumer = KafkaConsumer(**kwargs)
        # only partitions the cluster has: ListOffsets for a deleted one would wait out the request timeout
        existing = {t: self._consumer.partitions_for_topic(t) for t in {tp.topic for tp in wanted}}
        tps = [tp for tp in wanted if tp.partition in existing[tp.topic]]
        asked = self.clock()
        ends = self._consumer.end_offsets(tps) if tps else {}
        at = (asked + self.clock()) / 2  # the moment the broker answered, within half a round trip
        return Sample(at, int(time.time() * 1000), {(tp.topic, tp.partition): o for tp, o in ends.items()})

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

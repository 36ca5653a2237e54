"""The metric state as Prometheus metric families, built by two `prometheus_client` collectors.

Custom collectors rather than `Counter`/`Gauge` objects: the state is a pure fold
(`streaming.core.metrics`) that the tests check without any client library, and reading it under the
service's lock gives every scrape one consistent view of it. Health and per-group series are apart so
the service can cache the per-group text (up to `--max-groups` x strategies x 14 series) between
changes of the state and render only the health part on every scrape.

Group and strategy series appear only once the exporter has caught up with the end offsets it saw at
start. A restarted exporter rebuilds its counters by reading the topics from the beginning; exposing
them on the way up would show Prometheus a counter reset followed by a climb back to the old total,
which `rate()` and `increase()` read as a burst of rounds that never happened. Held back, the first
scrape after a restart sees the old total or more, and nothing is counted twice.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from streaming.core.metrics import CONFORMANCE, DIFF, OTHER, MetricState

PREFIX = "rebalance"

# (metric name without _total, help, StrategySeries attribute)
STRATEGY_COUNTERS = (
    ("rounds", "Rebalance rounds (a cooperative rebalance is a revoke round and its follow-ups)", "rounds"),
    ("rebalances", "Rebalances: rounds that start one (phase eager or revoke)", "rebalances"),
    ("partitions_moved", "Partitions taken from a member that stayed in the group", "moves"),
    ("moves_beyond_minimum", "Moves beyond the fewest any assignment with the same loads needed (moves - min_moves)",
     "moves_beyond_min"),
    ("partitions_paused", "Partitions whose consumption stopped in a round", "paused"),
    ("unconverged_rounds", "Cooperative rounds that hit the follow-up cap with partitions still withheld",
     "unconverged_rounds"),
    ("skipped_generations", "Generations of a captured group that never completed (observed strategy)",
     "skipped_generations"),
)
STRATEGY_GAUGES = (
    ("generation", "Generation (rounds so far, or the recorded generation for observed) after the last round",
     "generation"),
    ("members", "Members after the last round", "members"),
    ("partitions", "Partitions of subscribed topics after the last round", "partitions"),
    ("unassigned_partitions", "Partitions of subscribed topics nobody holds after the last round", "unassigned"),
    ("load_imbalance", "load_max - load_min after the last round (partitions)", "load_imbalance"),
    ("last_round_paused_partitions", "Partitions paused by the last round", "last_paused"),
    ("last_round_timestamp_seconds", "Event time of the last round (its event's ts, else when it was emitted)",
     "last_round_ts"),
)
CONFORMANCE_COUNTERS = (
    ("conformance_checks", "Recorded generations compared with Kafka's Java assignor", "checks"),
    ("conformance_mismatches", "Recorded generations whose assignment differs from Kafka's Java assignor's",
     "mismatches"),
    ("conformance_unknown", "Recorded generations the library could not judge (conforms null)", "unknown"),
)


class HealthCollector(Collector):
    """The exporter's own health, read from a `MetricState` guarded by `lock`."""

    def __init__(self, state: MetricState, lock: threading.Lock, topics: dict[str, str]) -> None:
        self.state, self.lock, self.topics = state, lock, topics

    def collect(self) -> list[Metric]:
        with self.lock:
            return list(self._health())

    def _health(self) -> Iterator[Metric]:
        h = self.state.health
        records = CounterMetricFamily(f"{PREFIX}_exporter_records", "Records read and folded", labels=["topic"])
        errors = CounterMetricFamily(f"{PREFIX}_exporter_decode_errors",
                                     "Records that did not decode (logged, skipped)", labels=["topic"])
        for kind in (DIFF, CONFORMANCE):
            records.add_metric([self.topics[kind]], h.records[kind])
            errors.add_metric([self.topics[kind]], h.decode_errors[kind])
        lag = GaugeMetricFamily(f"{PREFIX}_exporter_lag_records",
                                "Committed records not yet read (last stable offset - position)", labels=["topic"])
        for topic, n in sorted(h.lag.items()):
            lag.add_metric([topic], n)
        untracked = CounterMetricFamily(f"{PREFIX}_exporter_untracked_records",
                                        "Records of groups without series of their own", labels=["reason"])
        untracked.add_metric(["filtered"], h.filtered_records)
        untracked.add_metric(["max_groups"], h.overflow_records)
        yield from (records, errors, lag, untracked)
        yield GaugeMetricFamily(f"{PREFIX}_exporter_tracked_groups", "Groups with series of their own",
                                value=len(self.state.tracked))
        yield GaugeMetricFamily(f"{PREFIX}_exporter_max_groups", "The --max-groups bound",
                                value=self.state.max_groups)
        yield GaugeMetricFamily(f"{PREFIX}_exporter_broker_up",
                                "1 when the last request to the broker succeeded", value=int(h.broker_up))
        yield GaugeMetricFamily(f"{PREFIX}_exporter_caught_up",
                                "1 once the topics were read up to the end offsets seen at start",
                                value=int(h.caught_up))



class GroupsCollector(Collector):
    """Per group series of a `MetricState` guarded by `lock`; nothing until the exporter has caught up."""

    def __init__(self, state: MetricState, lock: threading.Lock) -> None:
        self.state, self.lock = state, lock

    def collect(self) -> list[Metric]:
        with self.lock:
            return list(self._groups()) if self.state.health.caught_up else []

    def _groups(self) -> Iterator[Metric]:
        series = sorted(self.state.strategies.items())
        for name, doc, attr in STRATEGY_COUNTERS:
            family = CounterMetricFamily(f"{PREFIX}_{name}", doc, labels=["group", "strategy"])
            for (group, strategy), s in series:
                family.add_metric([group, strategy], getattr(s, attr))
            yield family
        for name, doc, attr in STRATEGY_GAUGES:
            family = GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=["group", "strategy"])
            for (group, strategy), s in series:
                value = getattr(s, attr)
                if group != OTHER and value is not None:
                    family.add_metric([group, strategy], value)
            yield family
        checks = sorted(self.state.conformance.items())
        for name, doc, attr in CONFORMANCE_COUNTERS:
            family = CounterMetricFamily(f"{PREFIX}_{name}", doc, labels=["group", "protocol"])
            for (group, protocol), c in checks:
                family.add_metric([group, protocol], getattr(c, attr))
            yield family

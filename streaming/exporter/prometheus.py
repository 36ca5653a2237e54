"""The metric state in Prometheus's text format: the exporter's health through a `prometheus_client`
collector, the per-group series written directly (`render_groups` says why).

A custom collector rather than `Counter`/`Gauge` objects: the state is a pure fold
(`streaming.exporter.fold`) that the tests check without any client library, and reading it under the
service's lock gives every scrape one consistent view of it. The per-group text is cached by the
service between changes of the state; the health part is rendered on every scrape.

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

from streaming.exporter.fold import CONFORMANCE, DIFF, OTHER, MetricState

PREFIX = "rebalance"

# (metric name without _total, help, StrategySeries attribute)
STRATEGY_COUNTERS = (
    ("rounds", "Rebalance rounds (a cooperative rebalance is a revoke round and its follow-ups)", "rounds"),
    ("rebalances", "Rebalances: rounds that start one (phase eager, incremental or revoke)", "rebalances"),
    ("partitions_moved", "Partitions taken from a member that stayed in the group", "moves"),
    ("moves_beyond_minimum", "Moves beyond the fewest any assignment with the same loads needed (moves - min_moves)",
     "moves_beyond_min"),
    ("partitions_paused", "Partitions whose consumption stopped in a round", "paused"),
    ("unconverged_rounds", "Cooperative rounds that hit the follow-up cap with partitions still withheld",
     "unconverged_rounds"),
    ("skipped_generations", "Generations of a captured group that never completed (observed strategy)",
     "skipped_generations"),
    ("assignor_errors", "Rounds in which Kafka's assignor throws on the group's inputs (no assignment made)",
     "assignor_errors"),
    ("stopped_partition_seconds", "Partition-seconds of consumption stopped by rounds (stopped_ms / 1000, "
     "docs/cost.md)", "stopped_seconds"),
    ("lag_added_messages", "Messages that piled up while partitions were stopped (lag_added; groups with traffic)",
     "lag_added"),
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
    ("rate_total_messages_per_second", "Messages per second into the partitions of the topics the group's members "
     "subscribe to, at the last round (traffic events; only groups with traffic)", "rate_total"),
    ("rate_max_messages_per_second", "Messages per second of the most loaded member after the last round "
     "(the sum over the partitions it holds)", "rate_max"),
    ("rate_min_messages_per_second", "Messages per second of the least loaded member after the last round "
     "(0 when a member holds nothing)", "rate_min"),
)
KEYS_MOVED = ("keys_moved_ratio", "Share of a topic's key weight whose partition changed at its last partition-count "
              "change: per-key ordering breaks for those keys while the group catches up")
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


def render_groups(state: MetricState) -> bytes:
    """The per-group series in Prometheus's text format (0.0.4); empty until the exporter has caught up.

    Written directly rather than through `prometheus_client`'s metric families and `generate_latest`:
    at 1000 groups x 8 strategies x 14 series = 112,000 samples (near the default bound) those took 15 s per
    scrape on this project's 2-core machine, past Prometheus's default 10 s scrape timeout; these lines
    take a fraction of a second. The format is checked by parsing it with `prometheus_client`'s parser.
    """
    if not state.health.caught_up:
        return b""
    out: list[str] = []
    series = sorted(state.strategies.items())
    labels = {key: _labels(("group", key[0]), ("strategy", key[1])) for key, _ in series}
    for name, doc, attr in STRATEGY_COUNTERS:
        _header(out, f"{PREFIX}_{name}_total", doc, "counter")
        out.extend(f"{PREFIX}_{name}_total{{{labels[key]}}} {float(getattr(s, attr))}\n" for key, s in series)
    for name, doc, attr in STRATEGY_GAUGES:
        _header(out, f"{PREFIX}_{name}", doc, "gauge")
        out.extend(f"{PREFIX}_{name}{{{labels[key]}}} {float(v)}\n" for key, s in series
                   if key[0] != OTHER and (v := getattr(s, attr)) is not None)
    name, doc = KEYS_MOVED
    _header(out, f"{PREFIX}_{name}", doc, "gauge")
    out.extend(f"{PREFIX}_{name}{{{_labels(('group', group), ('topic', topic))}}} {share}\n"
               for (group, topic), share in sorted(state.keys_moved.items()))
    checks = sorted(state.conformance.items())
    check_labels = {key: _labels(("group", key[0]), ("protocol", key[1])) for key, _ in checks}
    for name, doc, attr in CONFORMANCE_COUNTERS:
        _header(out, f"{PREFIX}_{name}_total", doc, "counter")
        out.extend(f"{PREFIX}_{name}_total{{{check_labels[key]}}} {float(getattr(c, attr))}\n" for key, c in checks)
    return "".join(out).encode()


def _header(out: list[str], name: str, doc: str, kind: str) -> None:
    doc = doc.replace("\\", "\\\\").replace("\n", "\\n")
    out.append(f"# HELP {name} {doc}\n# TYPE {name} {kind}\n")


def _labels(*pairs: tuple[str, str]) -> str:
    return ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)


def _escape(value: str) -> str:
    """A label value as the text format writes it: backslash, double quote and line feed escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

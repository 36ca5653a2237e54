"""Sample membership histories: nine realistic consumer-group stories in the event format (docs/events-and-diffs.md).

    python -m whatif.histories [--out whatif/samples]

writes one JSONL file per history (one event per line). Everything is derived from fixed seeds, so
regenerating gives byte-identical files; the bundled copies in `whatif/samples/` are what
`rebalance demo` and the tests use. Member ids look like Kafka's (``client.id`` + "-" + a UUID, a new
UUID whenever a consumer process starts); ``ts`` are epoch milliseconds with realistic spacing
(pods start within seconds, deploys step every few tens of seconds, autoscalers act over minutes).

Eight of them carry `traffic` events (msgs/s per topic, docs/traffic.md) right after their first metadata: a hot
key, null-key topics, a topic that grows under keyed traffic, and rates as `rebalance capture --traffic-interval`
measures them; large-group has none.

Racks use two extension fields: ``rack`` on `join` (the member's ``client.rack``) and
``partition_racks`` on `partitions` events (``{topic: [[rack, ...] per partition]}``: the racks holding
a replica of each partition).
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_OUT = Path(__file__).with_name("samples")
START_TS = 1_732_200_000_000  # 2024-11-21T14:40:00Z: every history starts here
SEED = 20241121


@dataclass
class Timeline:
    """Builds one group's events in time order, with a seeded clock and seeded member ids."""

    group: str
    rng: random.Random
    ts: int = START_TS
    events: list[dict] = field(default_factory=list)

    def wait(self, seconds: float, jitter: float = 0.2) -> None:
        """Advance the clock by `seconds` ± `jitter` (relative), to the millisecond."""
        self.ts += max(1, round(seconds * 1000 * (1 + self.rng.uniform(-jitter, jitter))))

    def member_id(self, client_id: str) -> str:
        return f"{client_id}-{uuid.UUID(int=self.rng.getrandbits(128), version=4)}"

    def emit(self, type_: str, **fields: object) -> None:
        event: dict[str, object] = {"group": self.group, "type": type_}
        event.update({k: v for k, v in fields.items() if v is not None})
        event["ts"] = self.ts
        self.events.append(event)

    def join(
        self, client_id: str, topics: Iterable[str], rack: str | None = None, instance_id: str | None = None,
        weight: float | None = None,
    ) -> str:
        member = self.member_id(client_id)
        self.emit("join", member=member, topics=list(topics), rack=rack, instance_id=instance_id, weight=weight)
        return member

    def leave(self, member: str) -> None:
        self.emit("leave", member=member)

    def subscribe(self, member: str, topics: Iterable[str]) -> None:
        self.emit("subscribe", member=member, topics=list(topics))

    def partitions(self, counts: dict[str, int], racks: dict[str, list[list[str]]] | None = None) -> None:
        self.emit("partitions", partitions=counts, partition_racks=racks)

    def traffic(self, topic: str, **fields: object) -> None:
        """One topic's msgs/s, one millisecond after the previous event: the clock and its random draws stay as
        they were, so the membership story keeps its timestamps."""
        self.events.append({"group": self.group, "type": "traffic", "topic": topic, **fields,
                            "ts": self.events[-1]["ts"] + 1})


def zipf_keys(prefix: str, count: int, hot: str, hot_weight: float) -> dict[str, float]:
    """Key weights as real key spaces have them: a Zipf tail (weight 1 / rank^1.1) behind one hot key."""
    return {hot: hot_weight, **{f"{prefix}-{i:04d}": round(1 / i ** 1.1, 4) for i in range(1, count + 1)}}


def measured(name: str, count: int, base: float, spread: float, hot: dict[int, float] | None = None) -> list[float]:
    """Per-partition rates as a capture measures them: around `base` within ± `spread` (relative), `hot` ones
    set; seeded by `name` alone, so the membership stories' draws stay as they were."""
    rng = random.Random(f"{SEED}:{name}:traffic")
    rates = [round(base * rng.uniform(1 - spread, 1 + spread), 1) for _ in range(count)]
    for p, rate in (hot or {}).items():
        rates[p] = rate
    return rates


def rolling_deploy(rng: random.Random) -> Timeline:
    """12 consumers start, then a rolling deploy replaces them one by one (leave, new pod joins)."""
    tl = Timeline("checkout-service", rng)
    topics = {"orders": 24, "payments": 12}
    tl.partitions(topics)
    # one merchant drives most keyed orders: its partition is hot; payments as a capture measures them
    tl.traffic("orders", rate=12000, keys=zipf_keys("merchant", 120, "merchant-megastore", 60.0), null_share=0.05)
    tl.traffic("payments", rates=measured("payments", 12, 400, 0.15, {5: 2600.0}))
    members = []
    for i in range(12):
        tl.wait(0.6)
        members.append(tl.join(f"checkout-{i}", topics))
    tl.wait(600)
    for i, old in enumerate(members):
        tl.leave(old)  # SIGTERM: the consumer closes and sends LeaveGroup
        tl.wait(25)  # the new pod pulls its image and starts
        members[i] = tl.join(f"checkout-{i}", topics)
        tl.wait(10)  # readiness probe, then the deployment moves on
    return tl


def autoscaling(rng: random.Random) -> Timeline:
    """An autoscaler grows the group from 4 to 16 consumers under load, then shrinks it back to 4."""
    tl = Timeline("clickstream-enricher", rng)
    topics = {"clicks": 48}
    tl.partitions(topics)
    tl.traffic("clicks", rate=48000)  # null keys: the producer spreads them evenly
    members = []
    for i in range(4):
        tl.wait(0.8)
        members.append(tl.join(f"enricher-{i}", topics))
    tl.wait(1800)
    for i in range(4, 16):  # scale-out: one pod per ~75 s
        tl.wait(75)
        members.append(tl.join(f"enricher-{i}", topics))
    tl.wait(3600)
    while len(members) > 4:  # scale-in is slower (stabilisation window): one pod per ~5 min
        tl.wait(300)
        tl.leave(members.pop())
    return tl


def flapping_member(rng: random.Random) -> Timeline:
    """One consumer keeps exceeding max.poll.interval.ms: kicked out, rejoins, again — a rebalance storm.

    Twice the capture records the member's own LeaveGroup as well, 150 ms after the coordinator removed it:
    a leave of a member no longer in the group, which the service rejects (two dead letters, as a real
    capture has them).
    """
    tl = Timeline("fraud-scorer", rng)
    topics = {"transactions": 32}
    tl.partitions(topics)
    tl.traffic("transactions", rate=6400, keys=zipf_keys("card", 200, "card-4242-bot", 25.0), null_share=0)
    for i in range(8):
        tl.wait(0.5)
        member = tl.join(f"scorer-{i}", topics)
    flapper = member
    tl.wait(900)
    for flap in range(12):
        tl.leave(flapper)  # removed by the coordinator after a too-long poll
        if flap in (3, 8):
            tl.ts += 150  # no rng draw: the rest of the history stays as it was
            tl.leave(flapper)
        tl.wait(12)
        flapper = tl.join("scorer-7", topics)  # rejoins with a fresh member id
        tl.wait(35, jitter=0.4)
    return tl


def topic_growth(rng: random.Random) -> Timeline:
    """A topic grows from 6 to 24 partitions in steps of 6 while the group keeps consuming."""
    tl = Timeline("inventory-sync", rng)
    topics = {"inventory-updates": 6, "inventory-deltas": 4}
    tl.partitions(dict(topics))
    # keyed by SKU while the topic grows: at every growth keys move, and their per-key order breaks
    tl.traffic("inventory-updates", rate=20000, keys=zipf_keys("sku", 300, "sku-bestseller", 40.0), null_share=0)
    tl.traffic("inventory-deltas", rates=measured("inventory-deltas", 4, 250, 0.1))
    for i in range(5):
        tl.wait(0.7)
        tl.join(f"inventory-{i}", topics)
    for count in (12, 18, 24):
        tl.wait(6 * 3600)  # capacity planning adds partitions every few hours
        topics["inventory-updates"] = count
        tl.partitions(dict(topics))
    return tl


def static_restarts(rng: random.Random) -> Timeline:
    """Static members (group.instance.id) restart twice in a rolling fashion: no rebalance expected.

    A restarting static consumer sends no LeaveGroup; its new process joins with a new member id and the
    same instance id, and takes the old member's place without a rebalance (docs/events-and-diffs.md).
    """
    tl = Timeline("ledger-writer", rng)
    topics = {"ledger": 18}
    tl.partitions(topics)
    tl.traffic("ledger", rate=2500, keys=zipf_keys("account", 150, "account-treasury", 20.0), null_share=0)
    for i in range(6):
        tl.wait(0.5)
        tl.join(f"ledger-{i}", topics, instance_id=f"ledger-writer-{i}")
    for _ in range(2):
        tl.wait(3600)
        for i in range(6):
            tl.wait(20)  # restart well within session.timeout.ms
            tl.join(f"ledger-{i}", topics, instance_id=f"ledger-writer-{i}")
    return tl


RACKS = ("az-a", "az-b", "az-c")


def rack_aware(rng: random.Random) -> Timeline:
    """Nine consumers over three racks; replicas on two of the three racks (RF 2); one rack goes down and back."""
    tl = Timeline("geo-replicator", rng)
    topics = {"events": 24, "audit": 6}
    placement = {t: [[RACKS[(p + k) % 3] for k in range(2)] for p in range(n)] for t, n in topics.items()}
    tl.partitions(topics, racks=placement)
    tl.traffic("events", rates=measured("events", 24, 1500, 0.2, {7: 9800.0, 19: 7200.0}))
    tl.traffic("audit", rate=300)
    members: dict[str, list[str]] = {rack: [] for rack in RACKS}
    for i in range(9):
        rack = RACKS[i % 3]
        tl.wait(0.6)
        members[rack].append(tl.join(f"replicator-{i}", topics, rack=rack))
    tl.wait(1800)
    for member in members["az-c"]:  # az-c goes down: its consumers time out one after the other
        tl.wait(3)
        tl.leave(member)
    tl.wait(1200)
    for i in (2, 5, 8):  # az-c is back
        tl.wait(4)
        tl.join(f"replicator-{i}", topics, rack="az-c")
    return tl


def mixed_subscriptions(rng: random.Random) -> Timeline:
    """Members of one group subscribe to different topic sets; one changes its subscription, one leaves."""
    tl = Timeline("analytics", rng)
    topics = {"page-views": 24, "clicks": 16, "searches": 8, "purchases": 6}
    tl.partitions(topics)
    tl.traffic("page-views", rate=36000)
    tl.traffic("clicks", rate=9000, keys=zipf_keys("session", 80, "session-crawler", 30.0), null_share=0.2)
    tl.traffic("searches", rates=measured("searches", 8, 700, 0.2))
    tl.traffic("purchases", rates=measured("purchases", 6, 90, 0.25, {2: 640.0}))
    roles = [
        ("web", ["page-views", "clicks"], 3),
        ("search", ["searches", "clicks"], 2),
        ("commerce", ["purchases", "page-views"], 2),
        ("audit", list(topics), 1),
    ]
    members = []
    for role, subscription, count in roles:
        for i in range(count):
            tl.wait(0.7)
            members.append((tl.join(f"{role}-{i}", subscription), subscription))
    tl.wait(1800)
    web0, subscription = members[0]
    tl.subscribe(web0, [*subscription, "searches"])  # a config change adds a topic
    tl.wait(2400)
    tl.leave(members[3][0])  # a search consumer is decommissioned
    tl.wait(900)
    tl.join("search-2", ["searches", "clicks", "purchases"])
    return tl


LARGE_TOPICS, LARGE_PARTITIONS, LARGE_MEMBERS = 200, 500, 500


def large_group(rng: random.Random) -> Timeline:
    """Scale: 500 consumers over 200 topics x 500 partitions (100,000 partitions).

    The fleet starts while its topics are still being provisioned (joins see no metadata yet, so those
    rounds are cheap); the metadata of all 200 topics arrives in one `partitions` event, then one
    consumer crashes and its replacement joins: three full-size rebalances per strategy.
    """
    tl = Timeline("telemetry-ingest", rng)
    names = [f"tlm-{t:03d}" for t in range(LARGE_TOPICS)]
    members = []
    for i in range(LARGE_MEMBERS):
        tl.wait(0.05, jitter=0.5)
        members.append(tl.join(f"ingest-{i}", names))
    tl.wait(120)
    tl.partitions(dict.fromkeys(names, LARGE_PARTITIONS))
    tl.wait(3600)
    tl.leave(members[137])
    tl.wait(45)
    tl.join("ingest-137", names)
    return tl


def mixed_instance_sizes(rng: random.Random) -> Timeline:
    """Consumers on instances of three sizes, each announcing its size as `weight` (what
    `weighted-sticky` reads from userData): 2 x large (4), 3 x medium (2), 4 x small (1); a large
    instance is replaced by two small ones, then a medium one is resized to large (a rejoin with a new
    weight)."""
    tl = Timeline("video-transcode", rng)
    topics = {"transcode-jobs": 60, "thumbnail-jobs": 12}
    tl.partitions(topics)
    tl.traffic("transcode-jobs", rate=90)
    tl.traffic("thumbnail-jobs", rates=measured("thumbnail-jobs", 12, 35, 0.3))
    sizes = [("large", 4)] * 2 + [("medium", 2)] * 3 + [("small", 1)] * 4
    members = []
    for i, (size, weight) in enumerate(sizes):
        tl.wait(1.5)
        members.append((tl.join(f"transcoder-{size}-{i}", topics, weight=weight), size))
    tl.wait(2700)
    tl.leave(members[0][0])  # a large instance is retired ...
    for i in (9, 10):  # ... and two small ones take over
        tl.wait(40)
        members.append((tl.join(f"transcoder-small-{i}", topics, weight=1), "small"))
    tl.wait(1800)
    resized = members[2][0]  # a medium instance is resized to large: its consumer rejoins with weight 4
    tl.emit("join", member=resized, topics=list(topics), weight=4)
    return tl


HISTORIES: dict[str, Callable[[random.Random], Timeline]] = {
    "rolling-deploy": rolling_deploy,
    "autoscaling": autoscaling,
    "flapping-member": flapping_member,
    "topic-growth": topic_growth,
    "static-restarts": static_restarts,
    "rack-aware": rack_aware,
    "mixed-subscriptions": mixed_subscriptions,
    "large-group": large_group,
    "mixed-instance-sizes": mixed_instance_sizes,
}


def generate(name: str) -> list[dict]:
    """The events of one history; each history has its own seeded RNG, so they are independent."""
    return HISTORIES[name](random.Random(f"{SEED}:{name}")).events


def to_jsonl(events: Iterable[dict]) -> bytes:
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events).encode()


def sample_path(name: str) -> Path:
    """The bundled file of a history."""
    return DEFAULT_OUT / f"{name}.jsonl"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m whatif.histories", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="directory (default: %(default)s)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in HISTORIES:
        path = args.out / f"{name}.jsonl"
        path.write_bytes(to_jsonl(generate(name)))
        print(f"{path}: {sum(1 for _ in path.open())} events, {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()

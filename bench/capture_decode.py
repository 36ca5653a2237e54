"""Offsets-topic decoding speed: records/s through the decoder alone and through the capture's translator.

The log is synthetic but shaped like a busy cluster's offsets topic: for every GroupMetadata record (a
classic cooperative-sticky group of MEMBERS members, Subscription v3 with owned partitions, value v3) there are
COMMITS offset-commit records (value v3), and one KIP-848 epoch (member, target and current-assignment
records of one member plus the epoch records) per group generation.

    python -m bench.capture_decode                  # 200 groups x 20 generations, 10 members, 20 commits
    python -m bench.capture_decode --members 100 --commits 0
"""

from __future__ import annotations

import argparse
import struct
import time

from streaming.capture.coordinator_events import Translator
from streaming.capture.coordinator_records import decode_assignment, decode_key, decode_subscription, decode_value


def s(v: str) -> bytes:
    return struct.pack(">h", len(v)) + v.encode()


def cs(v: str) -> bytes:
    return bytes([len(v) + 1]) + v.encode()  # short strings only: one-byte varint


def tps(pairs: list[tuple[str, list[int]]]) -> bytes:
    return struct.pack(">i", len(pairs)) + b"".join(
        s(t) + struct.pack(f">i{len(p)}i", len(p), *p) for t, p in pairs)


def classic(group: str, generation: int, members: int, topic: str) -> tuple[bytes, bytes]:
    body = s("consumer") + struct.pack(">i", generation) + s("cooperative-sticky") + s("m-0") + struct.pack(">q", 1)
    body += struct.pack(">i", members)
    for i in range(members):
        parts = [i * 4 + k for k in range(4)]
        sub = struct.pack(">h", 3) + struct.pack(">i", 1) + s(topic) + struct.pack(">i", -1) + tps([(topic, parts)])
        sub += struct.pack(">i", generation - 1) + s(f"az-{i % 3}")
        asg = struct.pack(">h", 1) + tps([(topic, parts)]) + struct.pack(">i", -1)
        body += s(f"m-{i}") + s("static-" + str(i)) + s("client") + s("/10.0.0.1") + struct.pack(">ii", 30000, 10000)
        body += struct.pack(">i", len(sub)) + sub + struct.pack(">i", len(asg)) + asg
    return struct.pack(">h", 2) + s(group), struct.pack(">h", 3) + body


def commit(group: str, topic: str, partition: int) -> tuple[bytes, bytes]:
    return (struct.pack(">h", 1) + s(group) + s(topic) + struct.pack(">i", partition),
            struct.pack(">h", 3) + struct.pack(">qi", 12345, 0) + s("") + struct.pack(">q", 1))


def kip848(group: str, epoch: int, topic: str) -> list[tuple[bytes, bytes]]:
    tid = bytes(16)
    v0 = struct.pack(">h", 0)
    return [
        (struct.pack(">h", 5) + s(group) + s("c-1"), v0 + b"\x00\x00" + cs("clk") + cs("/h") + b"\x02" + cs(topic)
         + b"\x00" + struct.pack(">i", 30000) + cs("uniform") + b"\x00"),
        (struct.pack(">h", 4) + s(group), v0 + b"\x02" + tid + cs(topic) + struct.pack(">i", 4) + b"\x01\x00\x00"),
        (struct.pack(">h", 3) + s(group), v0 + struct.pack(">i", epoch) + b"\x00"),
        (struct.pack(">h", 7) + s(group) + s("c-1"), v0 + b"\x02" + tid + b"\x05" + struct.pack(">4i", 0, 1, 2, 3)
         + b"\x00\x00"),
        (struct.pack(">h", 6) + s(group), v0 + struct.pack(">i", epoch) + b"\x00"),
        (struct.pack(">h", 8) + s(group) + s("c-1"), v0 + struct.pack(">iib", epoch, epoch - 1, 0) + b"\x02" + tid
         + b"\x05" + struct.pack(">4i", 0, 1, 2, 3) + b"\x00\x01\x00"),
    ]


def build(groups: int, generations: int, members: int, commits: int) -> list[tuple[bytes, bytes]]:
    log: list[tuple[bytes, bytes]] = []
    for gen in range(1, generations + 1):
        for g in range(groups):
            log.append(classic(f"group-{g}", gen, members, f"topic-{g}"))
            log.extend(commit(f"group-{g}", f"topic-{g}", k % (members * 4)) for k in range(commits))
            log.extend(kip848(f"cg-{g}", gen, f"cg-topic-{g}"))
    return log


def decode_only(log: list[tuple[bytes, bytes]]) -> None:
    for key, value in log:
        v = decode_value(decode_key(key), value)
        for m in getattr(v, "members", ()):
            decode_subscription(m.subscription)
            decode_assignment(m.assignment)


def translate(log: list[tuple[bytes, bytes]]) -> None:
    tr = Translator("__consumer_offsets", partition_count=lambda _t: 64)
    for offset, (key, value) in enumerate(log):
        tr.record(key, value, 0, offset, 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--generations", type=int, default=20)
    ap.add_argument("--members", type=int, default=10)
    ap.add_argument("--commits", type=int, default=20)
    args = ap.parse_args()
    log = build(args.groups, args.generations, args.members, args.commits)
    mb = sum(len(k) + len(v) for k, v in log) / 1e6
    print(f"{len(log):,} records ({mb:.1f} MB), {args.members} members per classic group")
    for name, fn in (("decode", decode_only), ("decode + translate", translate)):
        start = time.perf_counter()
        fn(log)
        took = time.perf_counter() - start
        print(f"{name:>18}: {len(log) / took:,.0f} records/s ({mb / took:.1f} MB/s, {took:.2f}s)")


if __name__ == "__main__":
    main()

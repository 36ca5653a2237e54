"""`rebalance capture --bootstrap HOST:PORT`: a live cluster's rebalances as membership events
(docs/events-and-diffs.md §1)."""

from __future__ import annotations

import argparse
import re
import sys
from contextlib import nullcontext
from pathlib import Path

from streaming.cli.usage import CommandFailure, UsageError, client_options, kafka_failure

DEFAULT_CONNECT_TIMEOUT = 10.0
"""Seconds to wait for the broker's first answer: a broker that answers at all does so in well under a second
(a TLS or SASL handshake across a WAN included), so a wrong address or listener is said at once."""


def run(args: argparse.Namespace) -> int:
    if args.events_topic is not None and args.source != "offsets":
        raise UsageError("--events-topic needs --source offsets (describe: capture with --out FILE, then "
                         "`rebalance load FILE --bootstrap ... --topic TOPIC`)")
    if args.events_topic is not None and args.out != "-":
        raise UsageError("give --out or --events-topic, not both")
    try:
        groups = re.compile(args.groups) if args.groups is not None else None
    except re.error as exc:
        raise UsageError(f"--groups {args.groups!r}: {exc}") from None
    if args.poll_interval <= 0:
        raise UsageError(f"--poll-interval: expected a positive number of seconds, got {args.poll_interval}")
    if args.traffic_interval is not None and not 0 < args.traffic_interval < float("inf"):
        raise UsageError(f"--traffic-interval: expected a positive number of seconds, got {args.traffic_interval}")
    if not args.connect_timeout > 0:
        raise UsageError(f"--connect-timeout: expected a positive number of seconds, got {args.connect_timeout}")
    options = client_options(args.kafka_option, args.bootstrap, "consumer")
    options.setdefault("bootstrap.timeout.ms", str(round(args.connect_timeout * 1000)))  # --kafka-option wins
    from kafka.errors import KafkaError

    from streaming.capture.capture import (
        MARKER_TOPIC,
        CaptureFailed,
        CaptureSettings,
        EventsTopic,
        capture_describe,
        capture_offsets,
        written_events,
        written_positions,
    )

    settings = CaptureSettings(args.bootstrap, args.offsets_topic, groups, args.once, args.poll_interval,
                               args.strict, options, args.traffic_interval)
    previous = []
    made = None  # the output file, when this run creates it
    if args.out != "-":
        path = Path(args.out)
        try:
            previous = written_events(path)
        except (OSError, ValueError) as exc:
            raise UsageError(f"--out {path}: cannot continue this file ({exc})") from None
        made = None if path.exists() else path
    try:
        if args.events_topic is not None:
            capture_offsets(settings, EventsTopic(settings, args.events_topic, MARKER_TOPIC))
            return 0
        with open(args.out, "a", encoding="utf-8") if args.out != "-" else nullcontext(sys.stdout) as out:
            if args.source == "describe":
                capture_describe(settings, out, previous=previous)
            else:
                capture_offsets(settings, out, resume=written_positions(previous))
    except CaptureFailed as exc:
        _discard_empty(made)
        raise CommandFailure(str(exc)) from None
    except (KafkaError, ConnectionError, TimeoutError) as exc:
        _discard_empty(made)
        waited = int(options["bootstrap.timeout.ms"]) / 1000
        raise kafka_failure(args.bootstrap, exc, waited=waited) from None
    except OSError as exc:
        raise CommandFailure(f"{exc.filename or args.out}: {exc.strerror or exc}") from None
    except KeyboardInterrupt:  # every event is written and flushed per poll: stopping here loses nothing
        _discard_empty(made)
    return 0


def _discard_empty(made: Path | None) -> None:
    """A file this run created and wrote nothing into is not left behind by a capture that did not run."""
    if made is not None and made.exists() and made.stat().st_size == 0:
        made.unlink()

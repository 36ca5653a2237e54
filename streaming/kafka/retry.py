"""Client calls that outlive a broker restart.

A kafka-python client whose broker went away does not wait for it: a call while the broker is down raises
at once (`KafkaConnectionError`), and a long-lived `KafkaAdminClient` under noida-db killed and restarted eight
times raised ``NodeNotReadyError: No node_id provided`` on every call after one of the restarts; the Spark
source's `latestOffset` then failed the whole query (tests/integration/test_kafka_source.py calls the source
while its broker is down and restarting). So a retriable Kafka error drops the client (`reset`) and the next
attempt makes a new one, with a growing pause, until `timeout_s` has passed; anything else is raised at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from kafka.errors import KafkaError

log = logging.getLogger(__name__)

T = TypeVar("T")
PAUSES_S = (0.2, 0.5, 1.0, 2.0, 5.0)  # then 5 s each


def transient(exc: BaseException) -> bool:
    """A failure a later attempt may not meet: kafka-python marks them `retriable` (no connection, timeouts,
    stale metadata); a constructor that cannot bootstrap raises `KafkaTimeoutError`, which is one of them."""
    return isinstance(exc, KafkaError) and bool(exc.retriable)


def until_answered(call: Callable[[], T], *, timeout_s: float, reset: Callable[[], None], what: str) -> T:
    """`call()`'s result; after a `transient` failure `reset()` and call again, for up to `timeout_s`."""
    deadline, pauses = time.monotonic() + timeout_s, iter(PAUSES_S)
    while True:
        try:
            return call()
        except Exception as exc:
            left = deadline - time.monotonic()
            if not transient(exc) or left <= 0:
                raise
            log.info("%s: %s; trying again with a new client", what, exc)
            reset()
            time.sleep(min(next(pauses, PAUSES_S[-1]), left))

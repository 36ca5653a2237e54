"""The error for inputs on which Kafka's own assignor throws.

Kafka's Java assignors fail on some inputs a real group can reach (a `NullPointerException` in the
sticky engine's move loop, an `IllegalStateException` from the constrained builder). A replay of such a
history must not invent an assignment: the strategy raises `KafkaAssignorError` instead, naming Kafka's
exception and the input that triggers it. It is a `RuntimeError`, not a `ValueError`: the input is valid
(the group really was in that state) and it is Kafka that fails on it, so callers that treat `ValueError`
as bad input must not mistake it for one.
"""

from __future__ import annotations


class KafkaAssignorError(RuntimeError):
    """Kafka's assignor throws `exception` (a Java class name) with `message` on this input; `detail`
    names the offending input."""

    def __init__(self, exception: str, message: str | None, detail: str) -> None:
        self.exception = exception
        self.message = message
        self.detail = detail
        said = f"({message!r})" if message is not None else ""
        super().__init__(f"Kafka's assignor throws {exception}{said}: {detail}")

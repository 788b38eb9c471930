"""How hard memstream tries an endpoint: attempts per request, the wait between them, and a breaker.

Why bounded: a run against an endpoint that never answers once tried each call ten times (five in
the batch, five more one by one) and made no progress for ten minutes. Now each request is sent at
most ``attempts`` times; between attempts it waits an exponential backoff, or what the server's
``Retry-After`` asks (a server asking for longer than :data:`MAX_WAIT_S` is not asked again
early: the request fails). After :data:`DEFAULT_BREAKER` requests in a row fail for good the
breaker opens: nothing more is sent, every call raises
:class:`~memstream.errors.EndpointFailingError`, and a run checkpoints and stops. So a dead
endpoint stops a run within about ``attempts x (timeout + MAX_BACKOFF_S)`` per wave of requests.
"""

from __future__ import annotations

import math
import time
from email.utils import parsedate_to_datetime
from typing import Any

from memstream.models.env import count_setting

#: Requests sent for one call at most (the first and two retries), unless MEMSTREAM_ATTEMPTS says.
DEFAULT_ATTEMPTS = 3
MAX_ATTEMPTS = 20
#: Calls failed for good in a row (none answered in between) that open the breaker, unless MEMSTREAM_BREAKER says.
DEFAULT_BREAKER = 5
MAX_BREAKER = 10_000
#: The longest wait between attempts memstream chooses itself.
MAX_BACKOFF_S = 30.0
#: The longest ``Retry-After`` waited for; a server asking for more fails the request instead.
MAX_WAIT_S = 120.0


def attempts_setting(value: int | None = None) -> int:
    return count_setting(value, "MEMSTREAM_ATTEMPTS", DEFAULT_ATTEMPTS, MAX_ATTEMPTS,
                         "the attempts per model request")


def breaker_setting(value: int | None = None) -> int:
    return count_setting(value, "MEMSTREAM_BREAKER", DEFAULT_BREAKER, MAX_BREAKER,
                         "the failed requests in a row that stop a run")


def retry_after_s(error: BaseException, now: float | None = None) -> float | None:
    """The wait a server asked for in its ``Retry-After`` (seconds or an HTTP date) or
    ``retry-after-ms`` header; None if it asked for none, or wrote something unreadable."""
    headers: Any = getattr(getattr(error, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        raw_ms = headers.get("retry-after-ms")
        raw = headers.get("retry-after")
    except Exception:  # a header object of any shape
        return None
    for text, scale in ((raw_ms, 0.001), (raw, 1.0)):
        if not isinstance(text, str) or not text.strip():
            continue
        try:
            seconds = float(text) * scale
        except ValueError:
            try:
                seconds = parsedate_to_datetime(text).timestamp() - (time.time() if now is None else now)
            except (TypeError, ValueError, IndexError, OverflowError):
                continue
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return None


def backoff_s(attempt: int, base_s: float, error: BaseException) -> float | None:
    """How long to wait before attempt ``attempt + 1`` (``attempt`` counts from 0): the exponential
    backoff, or longer if the server asked; None if it asked for more than :data:`MAX_WAIT_S`."""
    delay = min(MAX_BACKOFF_S, base_s * 2**attempt)
    asked = retry_after_s(error)
    if asked is None:
        return delay
    return None if asked > MAX_WAIT_S else max(delay, asked)


class Breaker:
    """Opens after ``threshold`` calls in a row failed for good; stays open (the run stops, and is
    resumed when the endpoint is back). One breaker per model, shared by its concurrent requests."""

    def __init__(self, name: str, threshold: int) -> None:
        self.name, self.threshold = name, threshold
        self.in_a_row = 0
        self.reason: str | None = None

    @property
    def open(self) -> bool:
        return self.reason is not None

    def succeeded(self) -> None:
        self.in_a_row = 0

    def failed(self, error: str) -> None:
        self.in_a_row += 1
        if self.in_a_row >= self.threshold and self.reason is None:
            self.reason = (f"the endpoint of {self.name} is failing: {self.in_a_row} requests in a row failed "
                           f"(last: {error[:120]})")

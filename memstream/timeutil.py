"""Simulated time: timezone-aware datetimes only, stored as UTC epoch seconds."""

from __future__ import annotations

from datetime import UTC, datetime

from memstream.errors import MemstreamError

SECONDS_PER_HOUR = 3600.0
#: The span of simulated time memstream accepts (in UTC): a time near datetime's own limits would
#: overflow as soon as it is shown in another zone or moved by an hour.
EARLIEST = datetime(1000, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)


def require_aware(value: datetime, what: str = "time") -> datetime:
    """Reject naive datetimes: simulated time must say which zone it is in."""
    if not isinstance(value, datetime):
        raise MemstreamError(f"{what} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise MemstreamError(
            f"{what} {value.isoformat()} has no time zone; add one, e.g. {value.isoformat()}+00:00"
        )
    try:
        inside = EARLIEST <= value < LATEST  # aware times compare across zones
    except OverflowError:
        inside = False
    if not inside:
        raise MemstreamError(f"{what} {value.isoformat()} is outside the years 1000-8999 memstream accepts")
    return value


def parse_time(text: str, what: str = "time") -> datetime:
    """Parse an ISO-8601 time that carries its zone (``2023-02-13T09:00:00+00:00``)."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise MemstreamError(
            f"{what} {text!r} is not an ISO-8601 time; write e.g. 2023-02-13T09:00:00+00:00"
        ) from None
    return require_aware(value, what)


def minute_of_day(hhmm: str) -> int:
    """``"17:30"`` -> 1050."""
    hours, _, minutes = hhmm.partition(":")
    return int(hours) * 60 + int(minutes or 0)


def to_epoch(value: datetime) -> float:
    return require_aware(value).timestamp()


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)

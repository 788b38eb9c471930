"""The environment variables memstream reads (``MEMSTREAM_ATTEMPTS``, ``_BREAKER``, ``_TIMEOUT``,
``_CONCURRENCY``, ``_THREADS``, ``_MAX_TOKENS`` ...), read and checked in one place.

Why one place: each reader once checked its own way, and ``str.isdigit`` lets through digits ``int`` does not
take ("²") and digits of other scripts; a number here is ASCII (``0-9``, a point, an exponent), and a bad value
is one line naming the variable and what it should be, never a traceback.
"""

from __future__ import annotations

import math
import os
import re

from memstream.errors import MemstreamError

_WHOLE = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def env_text(variable: str) -> str:
    """The variable's value, stripped ("" if it is not set)."""
    return os.environ.get(variable, "").strip()


def is_whole(text: str) -> bool:
    """Whether ``text`` is a whole number in ASCII digits."""
    return _WHOLE.fullmatch(text) is not None


def count_setting(value: int | None, variable: str, default: int, top: int, what: str, low: int = 1) -> int:
    """``value``, else the environment variable, else ``default``: a whole number in ``low``..``top``."""
    if value is None:
        raw = env_text(variable)
        if not raw:
            return default
        if not is_whole(raw):
            raise MemstreamError(f"{variable}={raw!r} is not a whole number; set it to {what} ({low} to {top})")
        value = int(raw)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= top:
        raise MemstreamError(f"{what} must be a whole number from {low} to {top}, not {value!r}")
    return value


def setting(value: float | None, variable: str, default: float, what: str) -> float:
    """``value``, else the environment variable, else ``default``: a positive finite number."""
    if value is None:
        raw = env_text(variable)
        if not raw:
            return default
        if _NUMBER.fullmatch(raw) is None:
            raise MemstreamError(f"{variable}={raw!r} is not a number; set it to {what}")
        value = float(raw)
    if not math.isfinite(value) or value <= 0:
        raise MemstreamError(f"{what} must be a positive number, not {value!r}")
    return value

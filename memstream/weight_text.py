"""Retrieval weights written as text, ``rec=1,imp=1,rel=2``: one reader for every place a person writes them
(the CLI's ``--weights``, a sweep grid's ``weights``), so the same text means the same weights everywhere."""

from __future__ import annotations

import math

#: The components a weights text can name, short and long, by their long (``Weights``) names.
WEIGHT_COMPONENTS = {"rec": "recency", "imp": "importance", "rel": "relevance", "time": "time", "bm25": "bm25"}
#: What a run's retrieval weighs (and the order the old positional form gave them).
RUN_COMPONENTS = ("rec", "imp", "rel", "time")
_LONG = {long: long for long in WEIGHT_COMPONENTS.values()}
_SHORT = {long: short for short, long in WEIGHT_COMPONENTS.items()}


class WeightTextError(ValueError):
    """What is wrong with a weights text, said after the text itself (``has 'x', which is not a number``)."""


def read_named(parts: list[str], takes: tuple[str, ...], values: dict[str, float]) -> dict[str, float]:
    """``values`` (short names -> weights) with the ``name=number`` ``parts`` written over them; each name one
    of ``takes`` (short or long, any case), named once."""
    values = dict(values)
    seen: set[str] = set()
    for part in parts:
        name, _, number = (x.strip() for x in part.partition("="))
        short = _SHORT.get(_LONG.get(name.lower(), ""), name.lower())
        if short not in takes:
            raise WeightTextError(f"has {name!r}, which this command does not take")
        if short in seen:
            raise WeightTextError(f"names {short} twice")
        seen.add(short)
        values[short] = weight_number(number)
    return values


def named_weights(text: str, takes: tuple[str, ...] = RUN_COMPONENTS) -> dict[str, float]:
    """The weights ``rec=1,imp=2`` names, by their long (``Weights``) names; those left out are not there."""
    parts = [part.strip() for part in text.split(",")]
    if not all("=" in part for part in parts):
        raise WeightTextError("mixes named and positional weights")
    return {WEIGHT_COMPONENTS[short]: v for short, v in read_named(parts, takes, {}).items()}


def weight_number(number: str) -> float:
    """One weight from its text: a finite number from 0 to 1e6."""
    try:
        value = float(number)
    except ValueError:
        raise WeightTextError(f"has {number!r}, which is not a number") from None
    if not math.isfinite(value) or not 0 <= value <= 1e6:
        raise WeightTextError(f"has {number}; a weight is a number from 0 to 1e6")
    return value

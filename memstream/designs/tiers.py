"""Filling a context tier by tier: the one loop every design with more than one block runs.

A design names its tiers in the order they are filled, each with its share of the budget (or none:
it takes whatever the tiers before it left) and how it fills the room it is given. A tier's room is
its share, never more than what is left, less its heading; what it leaves unused goes on to the next.
The blocks are then shown in the design's reading order, which need not be the filling order (the
retrieved tier is filled last, with the rest, but read before the recent window).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from memstream.designs.context import Context, Fit, block, in_time_order, room_for

#: How a tier fills ``room`` tokens, given what the tiers filled before it kept (so it shows nothing twice).
Filler = Callable[[int, Mapping[str, Fit]], Fit]


@dataclass(frozen=True)
class Tier:
    """One tier to fill: its name (the block's), how it fills its room, and its share of the budget
    (None: the rest)."""

    name: str
    fill: Filler
    share: float | None = None


def fill_tiers(tiers: Sequence[Tier], budget: int) -> dict[str, Fit]:
    """Each tier's fit, filled in order under ``budget``: a tier with a share gets at most that share
    of the budget and at most what is left; one without gets what is left."""
    fits: dict[str, Fit] = {}
    left = budget
    for tier in tiers:
        cap = left if tier.share is None else min(left, int(budget * tier.share))
        fits[tier.name] = tier.fill(room_for(tier.name, cap), fits)
        made = block(tier.name, fits[tier.name].kept)
        left -= made.tokens if made else 0
    return fits


def assemble(fits: Mapping[str, Fit], order: Sequence[str], budget: int, *, in_time: Collection[str] = ()) -> Context:
    """The context of ``fits``: their blocks in reading ``order`` (the lines of the tiers in ``in_time``
    in time order, the others as their fit kept them), and every cut counted."""
    blocks = [b for tier in order
              if (b := block(tier, in_time_order(fits[tier].kept) if tier in in_time else fits[tier].kept))]
    return Context(blocks, budget, sum(f.cut for f in fits.values()), sum(f.cut_tokens for f in fits.values()))


def shown_ids(fits: Mapping[str, Fit], *tiers: str) -> set[int]:
    """The record ids the lines ``tiers`` kept come from (what a later tier must not show again)."""
    return {i for tier in tiers for line in fits[tier].kept for i in line.ids}

"""The designs by name, and how a command names them."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from memstream.designs.base import MemoryDesign
from memstream.designs.buffer import BufferSummary
from memstream.designs.full import FullContext
from memstream.designs.generative_agents import StreamDesign
from memstream.designs.letta import LettaDesign
from memstream.designs.profile import ProfileDesign
from memstream.designs.recent import RecentDesign
from memstream.designs.tiered import TieredDesign
from memstream.designs.vector import VectorDesign
from memstream.designs.versioned_facts import FactsDesign
from memstream.errors import MemstreamError
from memstream.files import problem
from memstream.models import Embedder

DESIGNS: dict[str, type[MemoryDesign]] = {d.name: d for d in (FullContext, BufferSummary, VectorDesign,
                                                               StreamDesign, TieredDesign, LettaDesign,
                                                               ProfileDesign, FactsDesign, RecentDesign)}
#: Designs that rank records for the query (their assembly time is a benchmark target).
RETRIEVAL_DESIGNS = ("vector", "stream", "tiered", "facts")


def design_names(text: str) -> list[str]:
    """``full,tiered`` or ``all`` (every design but a floor, :attr:`MemoryDesign.in_all`) as design names, each
    known; one line naming an unknown one."""
    every = [n for n, d in DESIGNS.items() if d.in_all]
    names = every if text.strip() == "all" else [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in DESIGNS]
    if unknown or not names:
        raise MemstreamError(f"unknown design {', '.join(map(repr, unknown)) or repr(text)}; use one of "
                             f"{', '.join(DESIGNS)} (or all)")
    return list(dict.fromkeys(names))


def make_design(name: str, *, embedder: Embedder | None = None, **config: Any) -> MemoryDesign:
    """A design by name with its settings (each design's ``Config`` says which it takes)."""
    kind = DESIGNS.get(name)
    if kind is None:
        raise MemstreamError(f"unknown design {name!r}; use one of {', '.join(DESIGNS)}")
    try:
        settings = kind.Config(**config)
    except ValidationError as e:
        raise MemstreamError(f"bad settings for the {name} design: {problem(e)}") from None
    return kind.made(settings, embedder)

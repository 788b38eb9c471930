"""Where a design's record ids come from: a counter in the design, or a store that hands out blocks.

Ids increase across owners so provenance never confuses two owners. A design alone counts them itself
(:class:`Counter`); a design kept in a store takes them from it (``memstream.designs.store``), which
reserves a block at a time so two processes writing one store never hand out the same id.
"""

from __future__ import annotations

from typing import Protocol


class IdSource(Protocol):
    def take(self) -> int:
        """The next id (never handed out before)."""

    @property
    def next_id(self) -> int:
        """The id :meth:`take` gives next (what a state file records)."""

    def sequence(self, name: str) -> IdSource:
        """Another sequence of ids, ``name``'s (a design's block ids beside its record ids), from 1."""


class Counter:
    """Ids counted in memory, from ``start``."""

    def __init__(self, start: int = 1) -> None:
        self.next_id = start

    def take(self) -> int:
        taken, self.next_id = self.next_id, self.next_id + 1
        return taken

    def sequence(self, name: str) -> Counter:
        return Counter()

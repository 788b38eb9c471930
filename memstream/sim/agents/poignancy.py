"""How poignant an observation is to the model rating it: the run's own distribution of ratings.

A model's importance ratings are on its own scale. A small model rated waking up and going to bed
10 and eating cereal 8, so a fixed threshold (consider re-planning at 7 or more) had every agent
re-plan over a running shower. So an observation makes an agent consider changing its plan only if
it is rated ``REACT_IMPORTANCE`` or more *and* it stands in the top ``REACT_TOP_SHARE`` of the
ratings the run's observations have had so far: a rating most observations get is routine for this
model, however high. Until ``REACT_MIN_RATINGS`` ratings are in, the absolute rule alone applies.
The tally is rebuilt from the stream on resume (the observations written are its record), and its
histogram is reported in ``metrics.json``.
"""

from __future__ import annotations

from collections.abc import Iterable

from memstream.stream import MAX_IMPORTANCE, MIN_IMPORTANCE, OBSERVATION, Memory, MemoryStream

#: Observations this poignant or more may make the agent consider changing its plan (the absolute floor).
REACT_IMPORTANCE = 7
#: ... if at most this share of the run's observations were rated as high or higher.
REACT_TOP_SHARE = 0.10
#: Ratings seen before the share is read (fewer say little of the model's scale).
REACT_MIN_RATINGS = 20


def perceived(memory: Memory) -> bool:
    """Whether ``memory`` is an observation of something nearby (``sim.perception`` writes what it is about)."""
    return memory.kind == OBSERVATION and "about" in memory.metadata


class PoignancyTally:
    """Counts of the importance the run's perceived observations (what an agent saw nearby, rated by the
    model; not its own actions or the places it learned) were rated, 1-10."""

    def __init__(self, ratings: Iterable[int] = ()) -> None:
        self.counts = [0] * (MAX_IMPORTANCE + 1)
        for r in ratings:
            self.add(r)

    @classmethod
    def from_stream(cls, stream: MemoryStream, owners: Iterable[str]) -> PoignancyTally:
        known = set(stream.owners())
        return cls(m.importance for o in owners if o in known for m in stream.memories(o) if perceived(m))

    def add(self, rating: int) -> None:
        self.counts[min(max(int(rating), MIN_IMPORTANCE), MAX_IMPORTANCE)] += 1

    @property
    def total(self) -> int:
        return sum(self.counts)

    def share_at_least(self, rating: int) -> float:
        return sum(self.counts[rating:]) / max(self.total, 1)

    def poignant(self, rating: int) -> bool:
        """Whether an observation rated ``rating`` is poignant enough to consider re-planning (module doc)."""
        if rating < REACT_IMPORTANCE:
            return False
        return self.total < REACT_MIN_RATINGS or self.share_at_least(rating) <= REACT_TOP_SHARE

    def histogram(self) -> dict[str, int]:
        """Rating -> observations so rated, every rating listed (for ``metrics.json``)."""
        return {str(r): self.counts[r] for r in range(MIN_IMPORTANCE, MAX_IMPORTANCE + 1)}

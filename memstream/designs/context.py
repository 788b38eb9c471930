"""What a design hands the model: labelled blocks under a token budget, each with its provenance.

A :class:`Block` is one tier of the context (pinned, summary, window, retrieved, insights,
history) as the model reads it, with its token count and the ids of the records it comes from
(for a summary or an insight, every record it derives from). Blocks are filled by the packers
here, which count what they leave out: nothing is cut silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from memstream.models import count_tokens

#: Each tier's heading, as the model reads it.
TITLES = {
    "pinned": "Pinned (always kept)",
    "summary": "Summary of earlier conversation",
    "insights": "Insights (reflections)",
    "retrieved": "Retrieved memories",
    "window": "Recent conversation",
    "history": "Conversation history",
}


@dataclass(frozen=True)
class Line:
    """One line a block may hold: its text, its token count, the records it comes from, and when."""

    text: str
    tokens: int
    ids: tuple[int, ...]
    order: float = 0.0  # where it goes in the block (creation time, as epoch seconds)


def header(tier: str) -> str:
    return f"## {TITLES.get(tier, tier)}"


def header_tokens(tier: str) -> int:
    return count_tokens(header(tier))


@dataclass(frozen=True)
class Block:
    tier: str
    text: str
    tokens: int
    ids: tuple[int, ...]

    @property
    def rendered(self) -> str:
        return f"{header(self.tier)}\n{self.text}"


def block(tier: str, lines: Sequence[Line]) -> Block | None:
    """The block holding ``lines`` in their order (None if there are none). Its tokens are exact:
    the heading's plus the lines' (a token never spans the newline between them)."""
    if not lines:
        return None
    ids = tuple(dict.fromkeys(i for line in lines for i in line.ids))
    return Block(tier, "\n".join(line.text for line in lines), header_tokens(tier) + sum(x.tokens for x in lines), ids)


@dataclass
class Context:
    """The assembled context: blocks in the order the model reads them, and what was cut."""

    blocks: list[Block]
    budget: int
    cut: int = 0                 # lines (records, summaries) that did not fit the budget
    cut_tokens: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(b.rendered for b in self.blocks)

    @property
    def tokens(self) -> int:
        return sum(b.tokens for b in self.blocks)

    def tokens_by_tier(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for b in self.blocks:
            out[b.tier] = out.get(b.tier, 0) + b.tokens
        return out

    @property
    def ids(self) -> set[int]:
        return {i for b in self.blocks for i in b.ids}


@dataclass
class Fit:
    """What a packer kept, in the order it kept them, and what it cut."""

    kept: list[Line]
    cut: int = 0
    cut_tokens: int = 0

    @property
    def tokens(self) -> int:
        return sum(x.tokens for x in self.kept)


#: Lines tried past the first that does not fit before a packer stops looking for shorter ones.
LOOKAHEAD = 20


def fit_best(ranked: Iterable[Line], room: int) -> Fit:
    """The best lines that fit in ``room`` tokens, taken in rank order. A line too long for what is
    left is skipped, so a shorter one after it can still go in; it counts as cut if a lower-ranked
    line went in instead. Looking stops ``LOOKAHEAD`` misses in a row after the room first runs short."""
    fit = Fit([])
    left, misses = room, 0
    skipped: list[Line] = []
    for line in ranked:
        if line.tokens <= left:
            fit.kept.append(line)
            left -= line.tokens
            fit.cut += len(skipped)
            fit.cut_tokens += sum(x.tokens for x in skipped)
            skipped, misses = [], 0
        else:
            skipped.append(line)
            misses += 1
            if misses > LOOKAHEAD or left <= 0:
                break
    return fit


def fit_newest(lines: Sequence[Line], room: int) -> Fit:
    """The newest lines that fit in ``room`` tokens, oldest first: cut from the oldest, contiguously."""
    total, start = 0, len(lines)
    while start > 0 and total + lines[start - 1].tokens <= room:
        start -= 1
        total += lines[start].tokens
    dropped = lines[:start]
    return Fit(list(lines[start:]), len(dropped), sum(x.tokens for x in dropped))


def in_time_order(lines: Iterable[Line]) -> list[Line]:
    return sorted(lines, key=lambda x: x.order)


def room_for(tier: str, budget: int) -> int:
    """The tokens a tier's lines may take of ``budget`` once its heading is paid for."""
    return max(0, budget - header_tokens(tier))

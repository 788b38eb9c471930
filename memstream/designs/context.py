"""What a design hands the model: labelled blocks under a token budget, each with its provenance.

A :class:`Block` is one tier of the context (pinned, summary, window, retrieved, insights,
history) as the model reads it, with its token count and the ids of the records it comes from
(for a summary or an insight, every record it derives from). Lines that share a time stamp (a
session's turns) are shown under one ``[stamp]`` heading rather than each carrying it, so the
budget goes to what was said. Blocks are filled by the packers here, which count what they leave
out: nothing is cut silently, and a block's token count is exactly ``count_tokens`` of its text (an
approximation of a model's tokens: words and punctuation, see ``memstream.models.count_tokens``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memstream.models import count_tokens

#: Each tier's heading, as the model reads it.
TITLES = {
    "pinned": "Pinned (always kept)",
    "core": "Core memory (blocks the agent edits)",
    "summary": "Summary of earlier conversation",
    "insights": "Insights (reflections)",
    "retrieved": "Retrieved memories",
    "window": "Recent conversation",
    "history": "Conversation history",
    "profile": "Profile file (read whole)",
    "preferences": "Profile (from current preferences)",
    "facts": "Facts (current versions; an earlier one says until when it held)",
}


@dataclass(frozen=True)
class Line:
    """One line a block may hold: its text, its token count, the records it comes from, when, and
    the stamp it is shown under (lines in a row with the same stamp share one heading)."""

    text: str
    tokens: int
    ids: tuple[int, ...]
    order: float = 0.0  # where it goes in the block (creation time, as epoch seconds)
    group: str = ""     # e.g. "[08 May 2023 13:56]"; "" for none
    group_tokens: int = 0


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
    """The block holding ``lines`` in their order (None if there are none), a stamp heading before each
    run of lines with the same stamp. Its token count is the sum of the heading's, the stamps' and the lines'
    (``count_tokens``, approximate; a token never spans the newline between them)."""
    if not lines:
        return None
    ids = tuple(dict.fromkeys(i for line in lines for i in line.ids))
    shown, tokens, group = [], header_tokens(tier), None
    for line in lines:
        if line.group and line.group != group:
            shown.append(line.group)
            tokens += line.group_tokens
        group = line.group
        shown.append(line.text)
        tokens += line.tokens
    return Block(tier, "\n".join(shown), tokens, ids)


@dataclass
class Context:
    """The assembled context: blocks in the order the model reads them, and what was cut."""

    blocks: list[Block]
    budget: int
    cut: int = 0                 # lines (records, summaries) that did not fit the budget
    cut_tokens: int = 0

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
    groups: set[str] = set()
    for line in ranked:
        cost = line.tokens + (line.group_tokens if line.group not in groups else 0)
        if cost <= left:
            fit.kept.append(line)
            groups.add(line.group)
            left -= cost
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
    """The newest lines that fit in ``room`` tokens, oldest first: cut from the oldest, contiguously.
    (Lines are in time order, so a stamp's lines are in a row and its heading is paid once.)"""
    total, start = 0, len(lines)
    while start > 0:
        line = lines[start - 1]
        opens = start == len(lines) or lines[start].group != line.group
        cost = line.tokens + (line.group_tokens if opens else 0)
        if total + cost > room:
            break
        start -= 1
        total += cost
    dropped = lines[:start]
    return Fit(list(lines[start:]), len(dropped), sum(x.tokens for x in dropped))


def in_time_order(lines: Iterable[Line]) -> list[Line]:
    return sorted(lines, key=lambda x: x.order)


def room_for(tier: str, budget: int) -> int:
    """The tokens a tier's lines may take of ``budget`` once its heading is paid for."""
    return max(0, budget - header_tokens(tier))

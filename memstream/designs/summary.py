"""A recursive summary of what left the window: new summary = summarise(old summary + evicted lines).

Evicted records wait in ``pending`` until a batch is full (or the owner consolidates); each batch
is one request, so a long history costs one call per ``batch`` turns, not one per turn. The
summary's provenance is every record it has absorbed. Used by ``buffer-summary`` and ``tiered``.

A new summary passes the design's checker (the write gate on its text, the critic against the old
summary and the lines it absorbs) before it replaces the old one; a rejected one is audited, the old
summary stays, and the batch is passed over (``skipped``), so one poisoned batch cannot rewrite
everything the summary says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from memstream.designs import prompts
from memstream.designs.context import Line
from memstream.designs.entries import Record
from memstream.designs.parse import parse_summary
from memstream.models import Request, Stage, count_tokens
from memstream.trust import Checker


@dataclass
class Summary:
    text: str = ""
    covers: list[int] = field(default_factory=list)   # ids of the records absorbed
    pending: list[Record] = field(default_factory=list)  # evicted, not yet absorbed
    calls: int = 0
    skipped: list[int] = field(default_factory=list)  # ids of records whose new summary was rejected
    #: The last :func:`summary_doc` made, with what it was made from (a store asks at every write).
    memo: tuple[tuple[Any, ...], dict[str, JsonValue]] | None = field(default=None, repr=False, compare=False)
    #: What :func:`summary_doc` worked out so far, extended as records, covers and skips grow (never remade).
    placed: Placed = field(default_factory=lambda: Placed(), repr=False, compare=False)

    @property
    def done(self) -> int:
        """How many of the owner's evicted records are behind the summary (absorbed or passed over)."""
        return len(self.covers) + len(self.skipped)

    def lines(self) -> list[Line]:
        """The summary as one line per sentence (a tight budget keeps its newest sentences)."""
        ids = tuple(self.covers)
        parts = [s.strip() for s in self.text.replace("\n", " ").split(". ") if s.strip()]
        texts = [p if p.endswith((".", "!", "?")) else p + "." for p in parts]
        return [Line(t, count_tokens(t), ids, float(i)) for i, t in enumerate(texts)]


@dataclass
class Placed:
    """Each record's position (for the records seen so far) and the runs of the covered and skipped ones:
    records, covers and skips only grow, so a write extends these by what it added, and the document costs
    the same at the 10,000th record as at the 100th."""

    position: dict[int, int] = field(default_factory=dict)
    seen: list[Record] = field(default_factory=list)  # the first and last record placed (an append-only check)
    covers: tuple[int, list[list[int]]] = field(default_factory=lambda: (0, []))  # how many are in the runs; the runs
    skipped: tuple[int, list[list[int]]] = field(default_factory=lambda: (0, []))

    def positions(self, records: Sequence[Record]) -> dict[int, int]:
        """Each of ``records``' id with its position, placing only the records new since the last call."""
        n = len(self.position)
        if n > len(records) or (n and (records[0] != self.seen[0] or records[n - 1] != self.seen[1])):
            self.position, self.covers, self.skipped, n = {}, (0, []), (0, []), 0  # another list: place again
        for i in range(n, len(records)):
            self.position[records[i].id] = i
        if records:
            self.seen = [records[0], records[-1]]
        return self.position

    @staticmethod
    def extended(made: tuple[int, list[list[int]]], ids: Sequence[int],
                 position: Mapping[int, int]) -> tuple[int, list[list[int]]]:
        done, spans = made
        if done > len(ids):
            done, spans = 0, []
        return len(ids), extend_runs(spans, [position[i] for i in ids[done:]])


def summary_doc(summary: Summary, records: Sequence[Record]) -> dict[str, JsonValue]:
    """The summary as a small document for a store: which of ``records`` (the list it summarises, in order)
    it covers, passed over and waits on, as runs of positions, so the document stays small as memory grows."""
    made_from = (summary.text, summary.calls, len(summary.covers), len(summary.skipped), len(summary.pending),
                 summary.pending[0].id if summary.pending else 0, summary.covers[-1:], summary.skipped[-1:])
    if summary.memo is not None and summary.memo[0] == made_from:
        return summary.memo[1]
    placed = summary.placed
    position = placed.positions(records)
    placed.covers = placed.extended(placed.covers, summary.covers, position)
    placed.skipped = placed.extended(placed.skipped, summary.skipped, position)
    doc: dict[str, JsonValue] = {
        "text": summary.text, "calls": summary.calls, "covers": [list[JsonValue](r) for r in placed.covers[1]],
        "skipped": [list[JsonValue](r) for r in placed.skipped[1]],
        "pending": runs([position[r.id] for r in summary.pending])}
    summary.memo = (made_from, doc)
    return doc


def summary_of(doc: Mapping[str, Any], records: Sequence[Record]) -> Summary:
    """The summary a :func:`summary_doc` document describes, over the same ``records``."""
    def at(key: str) -> list[Record]:
        return [records[i] for i in unruns(doc[key])]

    return Summary(str(doc["text"]), [r.id for r in at("covers")], at("pending"), int(doc["calls"]),
                   [r.id for r in at("skipped")])


def runs(positions: Sequence[int]) -> list[JsonValue]:
    """``[0, 1, 2, 5]`` as ``[[0, 3], [5, 1]]``: each run's start and length."""
    return [list[JsonValue](run) for run in extend_runs([], positions)]


def extend_runs(made: list[list[int]], positions: Sequence[int]) -> list[list[int]]:
    """``made`` (runs, changed in place) with ``positions`` after them; ``made``."""
    for p in positions:
        if made and made[-1][0] + made[-1][1] == p:
            made[-1][1] += 1
        else:
            made.append([p, 1])
    return made


def unruns(made: Any) -> list[int]:
    return [start + k for start, length in made for k in range(length)]


def absorb_stage(summary: Summary, batch: int, max_words: int, *, everything: bool = False,
                 checker: Checker | None = None, owner: str = "") -> Stage[int]:
    """Fold pending records into the summary a batch at a time (all of them with ``everything``,
    else only full batches); the number of requests made. An unusable answer leaves the batch pending;
    a new summary ``checker`` rejects leaves the old one and passes the batch over."""
    made = 0
    while summary.pending and (everything or len(summary.pending) >= batch):
        chunk = summary.pending[:batch]
        request = Request(prompts.SUMMARY_PURPOSE,
                          prompts.summary_messages(summary.text, [r.line for r in chunk], max_words), parse_summary)
        answer = yield request
        made += 1
        summary.calls += 1
        if answer is None:
            break
        if checker is not None and not (yield from _checked(checker, owner, summary, answer, chunk)):
            summary.skipped.extend(r.id for r in chunk)
        else:
            summary.text = answer
            summary.covers.extend(r.id for r in chunk)
        del summary.pending[:len(chunk)]
    return made


def _checked(checker: Checker, owner: str, summary: Summary, answer: str, chunk: list[Record]) -> Stage[bool]:
    """Whether the new summary passes the gate and the critic (its evidence: the old summary and the batch)."""
    evidence = [t for t in (summary.text, *(r.line for r in chunk)) if t]
    ids = f"{chunk[0].id}-{chunk[-1].id}" if chunk else "none"
    verdict = (yield from checker.consolidation_stage(owner, [answer], [evidence], what="summary",
                                                      source=f"{prompts.SUMMARY_PURPOSE} of records {ids}",
                                                      at=chunk[-1].at.isoformat() if chunk else ""))[0]
    return verdict.allowed

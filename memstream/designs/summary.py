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

from collections.abc import Iterable, Mapping, Sequence
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
    #: What :func:`summary_doc` made so far (a store asks at every write), so a write costs what it adds.
    memo: DocMemo | None = field(default=None, repr=False, compare=False)

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
class DocMemo:
    """What :func:`summary_doc` made from one list of records, kept to go on from: each record's position
    (the list only grows at its end), the runs of covered and passed-over positions so far, the last document."""

    records: Sequence[Record]
    position: dict[int, int] = field(default_factory=dict)
    covers: list[list[int]] = field(default_factory=list)
    covered: int = 0
    skipped: list[list[int]] = field(default_factory=list)
    passed: int = 0
    made_from: tuple[Any, ...] = ()
    doc: dict[str, JsonValue] = field(default_factory=dict)


def summary_doc(summary: Summary, records: Sequence[Record]) -> dict[str, JsonValue]:
    """The summary as a small document for a store: which of ``records`` (the list it summarises, in order)
    it covers, passed over and waits on, as runs of positions, so the document stays small as memory grows.
    What was made before is gone on from (covers and skips only grow), so a call costs what changed."""
    memo = summary.memo
    if (memo is None or memo.records is not records or len(memo.position) > len(records)
            or memo.covered > len(summary.covers) or memo.passed > len(summary.skipped)):
        memo = summary.memo = DocMemo(records)
    made_from = (summary.text, summary.calls, len(summary.covers), len(summary.skipped), len(summary.pending),
                 summary.pending[0].id if summary.pending else 0)
    if memo.doc and memo.made_from == made_from:
        return memo.doc
    memo.position.update((records[i].id, i) for i in range(len(memo.position), len(records)))
    extend_runs(memo.covers, [memo.position[i] for i in summary.covers[memo.covered:]])
    extend_runs(memo.skipped, [memo.position[i] for i in summary.skipped[memo.passed:]])
    memo.covered, memo.passed = len(summary.covers), len(summary.skipped)
    memo.made_from = made_from
    memo.doc = {"text": summary.text, "calls": summary.calls, "covers": _copied(memo.covers),
                "skipped": _copied(memo.skipped), "pending": runs([memo.position[r.id] for r in summary.pending])}
    return memo.doc


def _copied(made: list[list[int]]) -> list[JsonValue]:
    return [list[JsonValue](run) for run in made]


def summary_of(doc: Mapping[str, Any], records: Sequence[Record]) -> Summary:
    """The summary a :func:`summary_doc` document describes, over the same ``records``."""
    def at(key: str) -> list[Record]:
        return [records[i] for i in unruns(doc[key])]

    return Summary(str(doc["text"]), [r.id for r in at("covers")], at("pending"), int(doc["calls"]),
                   [r.id for r in at("skipped")])


def runs(positions: Sequence[int]) -> list[JsonValue]:
    """``[0, 1, 2, 5]`` as ``[[0, 3], [5, 1]]``: each run's start and length."""
    made: list[list[int]] = []
    extend_runs(made, positions)
    return _copied(made)


def extend_runs(made: list[list[int]], positions: Iterable[int]) -> None:
    """``made`` (runs, as :func:`runs` makes them) extended by ``positions``."""
    for p in positions:
        if made and made[-1][0] + made[-1][1] == p:
            made[-1][1] += 1
        else:
            made.append([p, 1])


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

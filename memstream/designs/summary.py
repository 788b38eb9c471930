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

from dataclasses import dataclass, field

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

"""A recursive summary of what left the window: new summary = summarise(old summary + evicted lines).

Evicted records wait in ``pending`` until a batch is full (or the owner consolidates); each batch
is one request, so a long history costs one call per ``batch`` turns, not one per turn. The
summary's provenance is every record it has absorbed. Used by ``buffer-summary`` and ``tiered``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memstream.designs import prompts
from memstream.designs.context import Line
from memstream.designs.entries import Record
from memstream.designs.parse import parse_summary
from memstream.models import Request, Stage, count_tokens


@dataclass
class Summary:
    text: str = ""
    covers: list[int] = field(default_factory=list)   # ids of the records absorbed
    pending: list[Record] = field(default_factory=list)  # evicted, not yet absorbed
    calls: int = 0

    def lines(self) -> list[Line]:
        """The summary as one line per sentence (a tight budget keeps its newest sentences)."""
        ids = tuple(self.covers)
        parts = [s.strip() for s in self.text.replace("\n", " ").split(". ") if s.strip()]
        texts = [p if p.endswith((".", "!", "?")) else p + "." for p in parts]
        return [Line(t, count_tokens(t), ids, float(i)) for i, t in enumerate(texts)]

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "covers": self.covers, "pending": [r.to_dict() for r in self.pending],
                "calls": self.calls}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Summary:
        return cls(d["text"], list(d["covers"]), [Record.from_dict(r) for r in d["pending"]], int(d["calls"]))


def absorb_stage(summary: Summary, batch: int, max_words: int, *, everything: bool = False) -> Stage[int]:
    """Fold pending records into the summary a batch at a time (all of them with ``everything``,
    else only full batches); the number of requests made. An unusable answer leaves the batch pending."""
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
        summary.text = answer
        summary.covers.extend(r.id for r in chunk)
        del summary.pending[:len(chunk)]
    return made

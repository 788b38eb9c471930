"""The audit of what the gate and the critic kept out: each blocked or unchecked text with where it
came from and why, and the counts a run or an eval reports."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TypedDict

#: The counts a checker keeps (``Checks.counts``), one source for reports and metrics.
CHECKED, BLOCKED, FAILED, REJECTED = "checked", "blocked", "failed", "rejected"


class BlockedRecord(TypedDict):
    """A :class:`Blocked` as it is written (a line of a run's ``blocked.jsonl``, an entry of a checkpoint's
    audit): a TypedDict, since it is dumped to JSON as is."""

    owner: str
    text: str
    what: str
    source: str
    reason: str
    by: str
    check: str
    at: str
    failed: bool


class AuditCounts(TypedDict):
    """The four counts a checker keeps, as a run's metrics and a checkpoint report them."""

    checked: int
    blocked: int
    failed: int
    rejected: int


class AuditRecord(TypedDict):
    """An :class:`Audit` as a checkpoint holds it: the four counts, then every blocked text."""

    counts: AuditCounts
    blocked: list[BlockedRecord]


@dataclass(frozen=True)
class Blocked:
    """A text that was not written: by the gate (``check="gate"``) or the critic (``check="critic"``).

    ``what`` says what it would have been (an entry, an observation, a whisper, a summary, an
    insight); ``source`` its provenance (who said it, which stage wrote it); ``failed`` that the
    check could not run, so the text was skipped unchecked.
    """

    owner: str
    text: str
    what: str
    source: str
    reason: str
    by: str
    check: str
    at: str = ""
    failed: bool = False

    def to_dict(self) -> BlockedRecord:
        return {"owner": self.owner, "text": self.text, "what": self.what, "source": self.source,
                "reason": self.reason, "by": self.by, "check": self.check, "at": self.at, "failed": self.failed}


@dataclass
class Audit:
    """What was kept out, and how many texts were checked, blocked, failed and rejected."""

    blocked: list[Blocked] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> AuditRecord:
        counts: AuditCounts = {"checked": self.counts[CHECKED], "blocked": self.counts[BLOCKED],
                               "failed": self.counts[FAILED], "rejected": self.counts[REJECTED]}
        return {"counts": counts, "blocked": [b.to_dict() for b in self.blocked]}

    @classmethod
    def from_dict(cls, d: AuditRecord) -> Audit:
        return cls([Blocked(**b) for b in d["blocked"]], Counter(d["counts"]))

"""The audit of what the gate and the critic kept out: each blocked or unchecked text with where it
came from and why, and the counts a run or an eval reports."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

#: The counts a checker keeps (``Checks.counts``), one source for reports and metrics.
CHECKED, BLOCKED, FAILED, REJECTED = "checked", "blocked", "failed", "rejected"


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Audit:
    """What was kept out, and how many texts were checked, blocked, failed and rejected."""

    blocked: list[Blocked] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {"counts": {k: self.counts.get(k, 0) for k in (CHECKED, BLOCKED, FAILED, REJECTED)},
                "blocked": [b.to_dict() for b in self.blocked]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Audit:
        return cls([Blocked(**b) for b in d["blocked"]], Counter(d["counts"]))

"""What the write gate and the consolidation critic decide about one text."""

from __future__ import annotations

from dataclasses import dataclass

#: ``Verdict.by`` when the gate is switched off (every text allowed, nothing asked).
OFF = "off"
#: ``Verdict.by`` for the offline stand-in rules (``memstream.trust.offline``), never a model's name.
OFFLINE_RULES = "offline rules"


@dataclass(frozen=True)
class Verdict:
    """Allow or block one text, with a one-line reason and who decided.

    ``failed`` means the check could not run (the model's answer was lost): ``allowed`` is then
    False and the caller skips the write and counts it, because an unchecked text is exactly what
    the gate exists to keep out.
    """

    allowed: bool
    reason: str
    by: str
    failed: bool = False

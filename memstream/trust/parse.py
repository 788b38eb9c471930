"""Reading the gate's and the critic's answers strictly: a decision word first, or nothing.

The answer decides whether a text enters memory, so nothing but the first word decides: ALLOW or
BLOCK (or a JSON object whose ``decision`` is one of them). Any other answer, however reasonable
it sounds, raises :class:`StructuredOutputError` (the runner asks again, then counts it lost), and
the reason kept is one short, printable line, never the model's free text at large.
"""

from __future__ import annotations

import json
import re

from memstream.errors import StructuredOutputError

#: The longest reason kept (characters); the rest of a rambling answer is dropped.
MAX_REASON_CHARS = 160
#: A blocked text's reason when the answer gave none.
NO_REASON = "blocked without a reason given"

_WORDS = {"allow": True, "allowed": True, "block": False, "blocked": False}
#: Decoration a model puts around its first word (markdown, quotes), and a label before it.
_LEAD = re.compile(r"^[\s*_`\"'#>]*(?:(?:answer|decision|verdict)\s*[:=-]\s*[\s*_`\"']*)?", re.IGNORECASE)
_FIRST = re.compile(r"([A-Za-z]+)\b[\s*_`\"']*[:.,;)\-–—]?\s*(.*)")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e\u00a0-\u024f]")


def parse_verdict(answer: str) -> tuple[bool, str]:
    """``(allowed, reason)`` from an answer that starts with ALLOW or BLOCK (reason "" when allowed);
    :class:`StructuredOutputError` for anything else."""
    text = answer.strip()
    if text.startswith("{"):
        return _from_json(text)
    first_line = _LEAD.sub("", text, count=1).split("\n", 1)[0]
    match = _FIRST.match(first_line)
    word = match.group(1).lower() if match else ""
    if word not in _WORDS:
        raise StructuredOutputError(f"the answer must begin with ALLOW or BLOCK (began {answer[:40]!r})")
    allowed = _WORDS[word]
    return allowed, "" if allowed else _reason(match.group(2) if match else "")


def _from_json(text: str) -> tuple[bool, str]:
    try:
        value = json.JSONDecoder().raw_decode(text)[0]
    except ValueError:
        raise StructuredOutputError(f"the answer's JSON does not parse (began {text[:40]!r})") from None
    decision = value.get("decision") if isinstance(value, dict) else None
    if not isinstance(decision, str) or decision.strip().lower() not in _WORDS:
        raise StructuredOutputError('the answer\'s JSON needs "decision": "allow" or "block"')
    allowed = _WORDS[decision.strip().lower()]
    reason = value.get("reason")
    return allowed, "" if allowed else _reason(reason if isinstance(reason, str) else "")


def _reason(raw: str) -> str:
    """One short printable line of what the model gave as its reason."""
    line = " ".join(_UNPRINTABLE.sub(" ", raw.split("\n", 1)[0]).split()).strip(" *_`\"'")
    return line[:MAX_REASON_CHARS] or NO_REASON

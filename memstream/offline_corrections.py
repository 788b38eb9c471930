"""Corrections said in ordinary English, found by plain rules: what a statement takes back ("no longer
at noon", "not on Friday", "moved from the pond"), and whether it corrects or calls off what was
said before. The offline stand-in's reader (:mod:`memstream.offline_events`) blanks what is taken
back before reading a time, a day and a place, so "it is no longer at noon, it now starts at three"
is read at three; :func:`memstream.offline_events.standing` lets the newer statement replace the
older.

- **taken back** (:func:`taken_back`): from "no longer", "not"/"n't" before a time, a day or a
  place ("is not at noon", "isn't on Friday", "not in the hall"), "instead of", "rather than" to
  the next comma, semicolon, full stop, "but", "now", "instead" or "rather"; and "from ..." after
  moved, changed, rescheduled, postponed, shifted or brought forward, to the next "to".
- **a correction** (:func:`corrects`): any of those, or "moved to", "has been moved", "was moved", "rescheduled",
  "postponed", "brought forward", "changed to", "it turns out", "actually", "correction", or a
  cancellation.
- **a cancellation** (:func:`cancels`): "cancelled"/"canceled", "called off", "scrapped", "won't
  take place", "will not happen", "is not happening", "isn't on any more".
"""

from __future__ import annotations

import re

_I = re.IGNORECASE
_STOP = r"(?=[,;.!?]|\s+(?:but|now|instead|rather|it now|they now|we now)\b|$)"
_TIME_OR_PLACE = (r"(?:at|on|in|until|before|after|around|this|next|tomorrow|today|tonight|noon|midday|\d|"
                  r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|one|two|three|four|five|six|seven|eight|"
                  r"nine|ten|eleven|twelve)\b")
_TAKEN_BACK = [
    re.compile(rf"\bno longer\b.*?{_STOP}", _I),
    re.compile(rf"(?:\bnot|n't)\s+(?:going to be\s+|be\s+|happening\s+|held\s+)?(?={_TIME_OR_PLACE}).*?{_STOP}", _I),
    re.compile(rf"\b(?:instead of|rather than)\b.*?{_STOP}", _I),
    re.compile(r"\b(?:moved|changed|rescheduled|postponed|shifted|brought forward|switched)\s+from\b.*?"
               r"(?=\s+to\b|[,;.!?]|$)", _I),
]
_CANCELS = re.compile(r"\b(?:cancel(?:l?ed|s|ling)?|called off|calling off|scrapped|won't (?:take place|happen)|"
                      r"will not (?:take place|happen)|(?:is|are)(?: not|n't) happening|(?:is|are)n't on any ?more|"
                      r"(?:is|are) not on any ?more)\b", _I)
_CORRECTS = re.compile(r"\b(?:moved to|been moved|was moved|moving to|rescheduled|postponed|brought forward|changed to|"
                       r"it turns out|turns out|actually|correction)\b", _I)


def taken_back(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that a correction takes back ("no longer at noon"), to read past them."""
    return [m.span() for pattern in _TAKEN_BACK for m in pattern.finditer(text) if m.end() > m.start()]


def cancels(text: str) -> bool:
    """Whether ``text`` calls something off."""
    return bool(_CANCELS.search(text))


def corrects(text: str) -> bool:
    """Whether ``text`` corrects (or calls off) something said before."""
    return bool(_CORRECTS.search(text) or _CANCELS.search(text) or taken_back(text))

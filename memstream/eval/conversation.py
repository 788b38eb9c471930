"""A benchmark's haystack as a conversation to write into a design: sessions of entries, in time order.

A LoCoMo turn ``D3:5`` belongs to session ``D3``; a LongMemEval round ``SID#2`` (or session ``SID``)
to session ``SID``. Each entry remembers which haystack memory it came from, so the gold evidence
can be found again among the design's record ids, and carries its position as its id: two memories that
say the same thing at the same time (LongMemEval repeats a few) are two entries, as they are two memories,
not one write retried (which a design store would keep once).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstream.designs import Entry, entry
from memstream.eval.datasets import Haystack

_LOCOMO = re.compile(r"^(D\d+):\d+$")


def session_of(key: str) -> str:
    found = _LOCOMO.match(key)
    return found.group(1) if found else key.split("#", 1)[0]


def source_of(text: str) -> str:
    """The speaker a turn names before its colon ("Caroline: ..."), else "user"."""
    head = text.split(":", 1)[0]
    return head if ":" in text and 0 < len(head) <= 40 and "\n" not in head else "user"


@dataclass
class Session:
    key: str
    positions: list[int]  # the haystack memories, in order
    entries: list[Entry]


def sessions(h: Haystack) -> list[Session]:
    """The haystack's memories grouped into consecutive sessions, each sorted by time (stably)."""
    out: list[Session] = []
    order = sorted(range(len(h.memories)), key=lambda i: h.memories[i].created_at)
    for i in order:
        m = h.memories[i]
        key = session_of(m.key)
        if not out or out[-1].key != key:
            out.append(Session(key, [], []))
        out[-1].positions.append(i)
        out[-1].entries.append(entry(text=m.text, at=m.created_at, source=source_of(m.text), session=key,
                                     id=str(i)))
    return out

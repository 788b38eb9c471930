"""Repeated answers: the same sentence given to different questions.

A small model interviewed answered two different questions with the same sentence: it answered
the identity, not the question. Such an answer is flagged, not fixed: the flag says the answer
shows nothing of what was asked. Two answers are "the same" when their words overlap almost
wholly (a Jaccard index of at least ``SAME_SHARE`` on lower-cased word sets: punctuation, case and
a changed word or two aside); questions are told apart the same way, so asking again is not
flagged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Word-set overlap (Jaccard) at or above which two texts are the same text.
SAME_SHARE = 0.8
_WORD = re.compile(r"\w+")


def words(text: str) -> frozenset[str]:
    """A text's words, lower-cased, as a set (order, case and punctuation do not make a new answer)."""
    return frozenset(_WORD.findall(text.lower()))


def same(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two word sets are nearly the same: Jaccard at least SAME_SHARE (two empty sets are not)."""
    union = len(a | b)
    return bool(union) and len(a & b) >= SAME_SHARE * union


def flag_repeats(answers: Sequence[tuple[str, str | None]]) -> list[bool]:
    """For each ``(question, answer)``, whether the answer is the same as, or nearly, the answer to a
    different question among ``answers``. No answer (None or blank) repeats nothing."""
    said = [(words(q), words(a or "")) for q, a in answers]
    return [bool(a) and any(j != i and b and not same(q, p) and same(a, b) for j, (p, b) in enumerate(said))
            for i, (q, a) in enumerate(said)]


def repeat_count(answers: Sequence[tuple[str, str | None]]) -> int:
    """How many of ``answers`` repeat an answer to another question."""
    return sum(flag_repeats(answers))

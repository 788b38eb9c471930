"""Importance (poignancy) ratings from a chat model, parsed so they never crash a run."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstream.errors import StructuredOutputError
from memstream.models.base import ChatModel
from memstream.models.request import Request, Stage, run_direct
from memstream.stream.memory import MAX_IMPORTANCE, MIN_IMPORTANCE
from memstream.stream.prompts import IMPORTANCE_PURPOSE, importance_messages

#: Used when no 1-10 rating could be had from the model (counted in its usage as a lost answer).
FALLBACK_IMPORTANCE = 5

_INT = re.compile(r"-?\d+")


def parse_importance(answer: str) -> int:
    """The first integer in 1..10 in ``answer``; :class:`StructuredOutputError` if there is none."""
    for token in _INT.findall(answer[:2000]):
        if len(token.lstrip("-")) <= 2 and MIN_IMPORTANCE <= int(token) <= MAX_IMPORTANCE:
            return int(token)
    raise StructuredOutputError(f"no rating from {MIN_IMPORTANCE} to {MAX_IMPORTANCE} in the answer "
                                f"(began {answer[:40]!r})")


def importance_stage(texts: Sequence[str]) -> Stage[list[int]]:
    """Rate each text 1-10 with the paper's prompt, all in one batch."""
    ratings = yield [Request(IMPORTANCE_PURPOSE, importance_messages(t), parse_importance) for t in texts]
    return [FALLBACK_IMPORTANCE if r is None else r for r in ratings]


def rate_importance(model: ChatModel, texts: Sequence[str]) -> list[int]:
    """:func:`importance_stage`, answered at once by ``model``."""
    return run_direct(importance_stage(texts), model) if texts else []

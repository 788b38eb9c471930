"""Importance (poignancy) ratings from a chat model, parsed so they never crash a run."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from memstream.models.base import ChatModel
from memstream.stream.memory import MAX_IMPORTANCE, MIN_IMPORTANCE
from memstream.stream.prompts import IMPORTANCE_PURPOSE, importance_messages

log = logging.getLogger(__name__)

#: Used when a model's answer holds no integer from 1 to 10 (logged each time).
FALLBACK_IMPORTANCE = 5

_INT = re.compile(r"-?\d+")


def parse_importance(answer: str) -> int | None:
    """The first integer in 1..10 in ``answer``, or None."""
    for token in _INT.findall(answer):
        value = int(token)
        if MIN_IMPORTANCE <= value <= MAX_IMPORTANCE:
            return value
    return None


def rate_importance(model: ChatModel, texts: Sequence[str]) -> list[int]:
    """Rate each text 1-10 with the paper's prompt, in one batch call."""
    answers = model.complete_batch(
        [importance_messages(t) for t in texts], purpose=IMPORTANCE_PURPOSE, temperature=0.0
    )
    ratings = []
    for text, answer in zip(texts, answers, strict=True):
        value = parse_importance(answer)
        if value is None:
            log.warning("importance answer %r for %r has no 1-10 rating; using %d",
                        answer[:60], text[:60], FALLBACK_IMPORTANCE)
            value = FALLBACK_IMPORTANCE
        ratings.append(value)
    return ratings

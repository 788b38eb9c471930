"""Importance (poignancy) ratings from a chat model, parsed so they never crash a run."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from functools import partial

from memstream.errors import MemstreamError, StructuredOutputError
from memstream.files import JsonObject
from memstream.models import ChatModel, Request, Stage, json_values, run_direct
from memstream.stream.memory import MAX_IMPORTANCE, MIN_IMPORTANCE, OBSERVATION, Memory
from memstream.stream.prompts import IMPORTANCE_PURPOSE, ROUND_PURPOSE, ROUND_SIZE, importance_messages, round_messages
from memstream.stream.stream import MemoryStream, NewMemory, new_memory

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


def parse_ratings(answer: str, n: int) -> list[int]:
    """Exactly ``n`` ratings in 1..10, from ``{"ratings": [...]}`` or, failing JSON, the answer's integers
    in order; :class:`StructuredOutputError` naming what is wrong otherwise."""
    found = _rating_list(answer)
    if len(found) != n:
        raise StructuredOutputError(f"{len(found)} rating(s) from {MIN_IMPORTANCE} to {MAX_IMPORTANCE} where {n} "
                                    f"were asked, one per numbered memory")
    return found


def salvage_ratings(answer: str, n: int) -> list[int | None]:
    """The ratings an answer gave for the first memories when it fell short (None for the rest)."""
    found = _rating_list(answer)[:n]
    if not found:
        raise StructuredOutputError("no rating in the answer")
    return [*found, *[None] * (n - len(found))]


def _rating_list(answer: str) -> list[int]:
    value = json_values(answer[:4000])
    items = next((v["ratings"] for v in value if isinstance(v, dict) and isinstance(v.get("ratings"), list)),
                 next((v for v in value if isinstance(v, list)), None))
    if items is None:  # a numbered list or bare numbers: the integers, less any "N." numbering
        items = [t for t in re.findall(r"(?<![\d.])(\d{1,2})(?!\.\s|\d)", answer[:4000])]
    ratings = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)) or not str(item).strip().isdigit():
            continue
        if MIN_IMPORTANCE <= int(item) <= MAX_IMPORTANCE:
            ratings.append(int(item))
    return ratings


def importance_stage(texts: Sequence[str]) -> Stage[list[int]]:
    """Rate each text 1-10: one alone with the paper's prompt; several together, ``ROUND_SIZE`` to a request,
    so the model compares them (a small model rating memories one at a time used three values for a
    whole day, routine acts among the highest). All the requests go in one batch."""
    texts = list(texts)
    if len(texts) <= 1:
        alone = yield [Request(IMPORTANCE_PURPOSE, importance_messages(t), parse_importance) for t in texts]
        return [FALLBACK_IMPORTANCE if r is None else r for r in alone]
    parts = [texts[i:i + ROUND_SIZE] for i in range(0, len(texts), ROUND_SIZE)]
    answers = yield [Request(ROUND_PURPOSE, round_messages(part), partial(parse_ratings, n=len(part)),
                             salvage=partial(salvage_ratings, n=len(part))) for part in parts]
    ratings: list[int] = []
    for part, answer in zip(parts, answers, strict=True):
        given = answer if answer is not None else [None] * len(part)
        ratings += [FALLBACK_IMPORTANCE if r is None else r for r in given]
    return ratings


def rate_importance(model: ChatModel, texts: Sequence[str]) -> list[int]:
    """:func:`importance_stage`, answered at once by ``model``."""
    return run_direct(importance_stage(texts), model) if texts else []


def rated(model: ChatModel | None, items: Sequence[NewMemory]) -> list[NewMemory]:
    """``items``, those without an importance rated by ``model`` (in one batch): the stream itself
    holds no model, so whoever writes unrated memories rates them first."""
    missing = [i for i, it in enumerate(items) if it.importance is None]
    if missing and model is None:
        raise MemstreamError("importance not given and no chat model to rate it; pass importance 1..10 or --llm")
    updated = list(items)
    if missing and model is not None:
        for i, rating in zip(missing, rate_importance(model, [items[i].text for i in missing]), strict=True):
            updated[i] = items[i].model_copy(update={"importance": rating})
    return updated


def add_rated(stream: MemoryStream, model: ChatModel, owner: str, text: str, *, at: datetime,
              kind: str = OBSERVATION, cites: Sequence[int] = (), metadata: JsonObject | None = None) -> Memory:
    """Add one memory to ``stream`` at once, its importance rated by ``model`` (a notebook's one-liner)."""
    item = new_memory(owner=owner, text=text, kind=kind, created_at=at, cites=tuple(cites), metadata=metadata or {})
    return stream.extend(rated(model, [item]))[0]

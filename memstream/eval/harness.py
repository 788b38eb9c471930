"""Every retriever on the same memories of the same run, scored with the same metrics.

Retrieval for evaluation records no accesses: each question meets the stream as
ingested, at its own time. ``bm25`` is the plain baseline over each memory's
text; the others find a memory by its keys (its text and, for LoCoMo turns, the
turn in context), taking the best key. The generative score reuses the stream's own
normalisation, recency and tie-breaking (``memstream.stream.scoring``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from memstream.designs import (
    NEEDS_IMPORTANCE,
    RETRIEVAL_WEIGHTS,
    RETRIEVERS,
    Signals,
    bm25_index,
    bm25_scores,
    score,
    tokenize,
)
from memstream.errors import MemstreamError
from memstream.eval.datasets import Dataset, Haystack
from memstream.eval.metrics import ndcg, recall_all, recall_any
from memstream.files import JsonObject
from memstream.models import ChatModel, Embedder, count_tokens
from memstream.stream import Weights, rate_importance, time_scope, top_k
from memstream.timeutil import to_epoch

#: The importance prompt sees at most this many characters of a memory (a session can be long).
IMPORTANCE_CHARS = 1500
@dataclass
class _Prepared:
    """One haystack ready to score: per-question matrices over its memories."""

    relevance: np.ndarray  # (questions, memories), best chunk cosine
    bm25: np.ndarray       # (questions, memories), over each memory's text
    bm25_keys: np.ndarray  # (questions, memories), best lexical key
    importance: np.ndarray  # (memories,)
    created_s: np.ndarray  # (memories,)
    asked_s: np.ndarray    # (questions,)
    tokens: np.ndarray     # (memories,)
    in_scope: np.ndarray   # (questions, memories), 1 inside the span the question names


@dataclass(frozen=True)
class _Scored:
    """One question's ranking under one retriever, scored."""

    category: str
    history_tokens: int
    metrics: dict[str, float]       # recall_any@k, recall_all@k, ndcg@k
    context_tokens: dict[int, int]  # the tokens of the top k, by k
    curve: list[float]              # recall_any@1, @2, ...


def _prepare(h: Haystack, embedder: Embedder, chat: ChatModel | None, retrievers: set[str]) -> _Prepared:
    chunks = [c for m in h.memories for c in m.chunks]
    starts = np.cumsum([0] + [len(m.chunks) for m in h.memories[:-1]])
    q_texts = [q.text for q in h.questions]
    if retrievers & {"relevance", "hybrid", "generative", "generative+bm25"}:
        sims = embedder.embed(q_texts) @ embedder.embed(chunks).T
        relevance = np.maximum.reduceat(sims, starts, axis=1)
    else:
        relevance = np.zeros((len(q_texts), len(h.memories)), dtype=np.float32)
    bm25 = np.zeros_like(relevance, dtype=np.float64)
    bm25_keys = bm25
    q_tokens = tokenize(q_texts)
    if retrievers & {"bm25"}:
        bm25 = _bm25([m.text for m in h.memories], q_tokens, np.arange(len(h.memories)))
    if retrievers & {"bm25+keys", "hybrid", "generative+bm25"}:
        keys = [k for m in h.memories for k in (m.lexical_keys or [m.text])]
        starts = np.cumsum([0] + [len(m.lexical_keys or [m.text]) for m in h.memories[:-1]])
        bm25_keys = _bm25(keys, q_tokens, starts)
    importance = np.full(len(h.memories), 5.0)
    if retrievers & NEEDS_IMPORTANCE:
        if chat is None:
            raise MemstreamError("the importance and generative retrievers need a chat model")
        importance = np.array(rate_importance(chat, [m.text[:IMPORTANCE_CHARS] for m in h.memories]),
                              dtype=np.float64)
    created = np.array([to_epoch(m.created_at) for m in h.memories])
    in_scope = np.zeros_like(relevance, dtype=np.float64)
    for i, q in enumerate(h.questions):
        if (scope := time_scope(q.text, q.asked_at)) is not None:
            in_scope[i] = scope.contains(created)
    return _Prepared(relevance, bm25, bm25_keys, importance, created,
                     np.array([to_epoch(q.asked_at) for q in h.questions]),
                     np.array([count_tokens(m.text) for m in h.memories]), in_scope)


def _bm25(docs: list[str], q_tokens: list[list[str]], starts: np.ndarray) -> np.ndarray:
    """BM25 of every query against ``docs``; a memory (docs from ``starts``) scores as its best doc."""
    return bm25_scores(bm25_index(docs), len(docs), q_tokens, starts)


def scores_for(name: str, p: _Prepared, i: int, w: Weights) -> np.ndarray:
    """Question ``i``'s score of every memory under retriever ``name`` (the rules: ``memstream.designs``)."""
    return score(name, Signals(p.relevance[i], p.bm25[i], p.bm25_keys[i], p.importance, p.created_s,
                               float(p.asked_s[i]), p.in_scope[i]), w)


def evaluate(dataset: Dataset, embedder: Embedder, chat: ChatModel | None, *,
             retrievers: Sequence[str] = RETRIEVERS, ks: Sequence[int] = (5, 10),
             weights: Weights | None = None, progress: bool = True) -> list[JsonObject]:
    """Run every retriever on every question; one result object per retriever."""
    for name in retrievers:
        if name not in RETRIEVERS:
            raise MemstreamError(f"unknown retriever {name!r}; use one of {', '.join(RETRIEVERS)} or all")
    if not ks or min(ks) <= 0:
        raise MemstreamError("-k needs positive integers, e.g. 5,10")
    w = weights or RETRIEVAL_WEIGHTS
    curve_k = max(max(ks), 20)
    rows: dict[str, list[_Scored]] = defaultdict(list)
    bar = tqdm(dataset.haystacks, desc=f"{dataset.name} {dataset.granularity}", unit="stream",
               disable=not progress, leave=False)
    for h in bar:
        p = _prepare(h, embedder, chat, set(retrievers))
        history = int(p.tokens.sum())
        for i, q in enumerate(h.questions):
            for name in retrievers:
                ranked = top_k(scores_for(name, p, i, w), curve_k).tolist()
                rows[name].append(_Scored(
                    q.category, history,
                    {**{f"recall_any@{k}": recall_any(ranked, q.evidence, k) for k in ks},
                     **{f"recall_all@{k}": recall_all(ranked, q.evidence, k) for k in ks},
                     **{f"ndcg@{k}": ndcg(ranked, q.evidence, k) for k in ks}},
                    {k: int(p.tokens[ranked[:k]].sum()) for k in ks},
                    [recall_any(ranked, q.evidence, k) for k in range(1, curve_k + 1)]))
    return [_summary(dataset, embedder, name, rows[name], ks) for name in retrievers]


def _summary(dataset: Dataset, embedder: Embedder, name: str, rows: list[_Scored],
             ks: Sequence[int]) -> JsonObject:
    """One retriever's result, as ``memstream eval --json`` writes it: a JSON object, not a typed row, because
    its metric keys are named after the ``ks`` asked for (``recall_any@5``, ``context_share_median@10``)."""
    metrics = [f"{m}@{k}" for k in ks for m in ("recall_any", "recall_all", "ndcg")]

    def mean(rs: list[_Scored]) -> dict[str, float]:
        return {m: round(statistics.fmean(r.metrics[m] for r in rs), 4) if rs else 0.0 for m in metrics}

    by_cat: dict[str, list[_Scored]] = defaultdict(list)
    for r in rows:
        by_cat[r.category].append(r)
    out: JsonObject = {"dataset": dataset.name, "granularity": dataset.granularity, "retriever": name,
                           "embedder": embedder.name, "n": len(rows), **mean(rows)}
    if rows:
        out["history_tokens_median"] = statistics.median(r.history_tokens for r in rows)
        for k in ks:
            out[f"context_tokens_median@{k}"] = statistics.median(r.context_tokens[k] for r in rows)
            out[f"context_share_median@{k}"] = round(statistics.median(
                r.context_tokens[k] / max(r.history_tokens, 1) for r in rows), 4)
        out["recall_any_curve"] = [round(statistics.fmean(c), 4) for c in zip(*(r.curve for r in rows),
                                                                               strict=True)]
    out["per_category"] = {c: {"n": len(rs), **mean(rs)} for c, rs in sorted(by_cat.items())}
    out["skipped"] = dict(dataset.skipped)
    return out

"""The retrievers, as scores over one query's signals: the one source of the ranking rules that
``memstream eval`` measures and the ``tiered`` design retrieves with.

A retriever ranks an owner's records for one query from per-record signals (dense relevance,
BM25 over the record's text and over its keys, importance, creation time, whether the record is
inside the span of time the query names). ``bm25`` is the plain lexical baseline; ``hybrid`` is
reciprocal rank fusion (Cormack et al. 2009) of keyed BM25 and dense relevance; ``generative`` is
the paper's score (min-max normalised recency, importance and relevance) plus memstream's time
term; ``generative+bm25`` adds keyed BM25 as a fourth normalised component.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import bm25s
import numpy as np
import Stemmer

from memstream.errors import MemstreamError
from memstream.facts import RRF_K  # reciprocal rank fusion's constant, one for every fused ranking
from memstream.stream import Weights, minmax, recency, top_k

RETRIEVERS = ("recency", "importance", "relevance", "bm25", "bm25+keys", "hybrid", "generative",
              "generative+bm25")
#: Retrievers that need every record's importance rated by a chat model.
NEEDS_IMPORTANCE = frozenset({"importance", "generative", "generative+bm25"})
#: Retrievers that need the embedder.
NEEDS_VECTORS = frozenset({"relevance", "hybrid", "generative", "generative+bm25"})
#: Retrievers that need BM25.
LEXICAL = frozenset({"bm25", "bm25+keys", "hybrid", "generative+bm25"})
_STEMMER = Stemmer.Stemmer("english")
logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets its own logger to DEBUG


#: The retrievers' weights unless a caller gives its own: the paper's, with the time term on (the
#: stream leaves it off by default; ``memstream eval`` and ``tiered`` have always weighed it 1).
RETRIEVAL_WEIGHTS = Weights(time=1.0)


@dataclass(frozen=True)
class Signals:
    """One query's view of an owner's records: one value per record in each array."""

    relevance: np.ndarray   # best-key cosine
    bm25: np.ndarray        # over each record's text
    bm25_keys: np.ndarray   # best lexical key
    importance: np.ndarray
    created_s: np.ndarray
    asked_s: float
    in_scope: np.ndarray    # 1 inside the span of time the query names


def check_retriever(name: str) -> str:
    """``name`` if it is a known retriever, else one clear error listing them."""
    if name not in RETRIEVERS:
        raise MemstreamError(f"unknown retriever {name!r}; use one of {', '.join(RETRIEVERS)}")
    return name


def tokenize(texts: list[str]) -> list[list[str]]:
    """BM25 tokens: English stopwords out, Snowball-stemmed."""
    return bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, show_progress=False, return_ids=False)


def query_tokens(query: str) -> list[list[str]]:
    """:func:`tokenize` of one query (``[tokens]``), remembered: a reader asks the same queries of many owners
    (the town's measures ask every agent about every other by name)."""
    return [list(_query_tokens(query))]


@functools.lru_cache(maxsize=4096)
def _query_tokens(query: str) -> tuple[str, ...]:
    return tuple(tokenize([query])[0])


def bm25_index(docs: list[str]) -> bm25s.BM25 | None:
    """A BM25 index of ``docs``; None when no doc holds a word it can index (bm25s cannot index that)."""
    tokens = tokenize(docs)
    if not any(tokens):
        return None
    index = bm25s.BM25()
    index.index(tokens, show_progress=False)
    return index


def bm25_scores(index: bm25s.BM25 | None, n_docs: int, q_tokens: list[list[str]], starts: np.ndarray) -> np.ndarray:
    """BM25 of every query against the indexed docs; a record (docs from ``starts``) scores as its best doc."""
    scores = np.zeros((len(q_tokens), n_docs))
    if index is None:
        return np.maximum.reduceat(scores, starts, axis=1) if n_docs else scores
    for i, q in enumerate(q_tokens):
        if q:
            scores[i] = index.get_scores(q)
    return np.maximum.reduceat(scores, starts, axis=1)


def ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of each record under ``scores`` (ties toward the newer record)."""
    order = top_k(scores, len(scores))
    out = np.empty(len(scores), dtype=np.int64)
    out[order] = np.arange(1, len(scores) + 1)
    return out


def score(name: str, s: Signals, w: Weights) -> np.ndarray:
    """Every record's score for one query under retriever ``name`` (higher ranks first)."""
    rec = recency(s.created_s, s.asked_s, w.decay)
    if name == "recency":
        return rec
    if name == "importance":
        return s.importance
    if name == "relevance":
        return s.relevance.astype(np.float64)
    if name == "bm25":
        return s.bm25
    if name == "bm25+keys":
        return s.bm25_keys
    if name == "hybrid":
        dense = s.relevance.astype(np.float64)
        return 1.0 / (RRF_K + ranks(s.bm25_keys)) + 1.0 / (RRF_K + ranks(dense))
    total = (w.recency * minmax(rec) + w.importance * minmax(s.importance)
             + w.relevance * minmax(s.relevance.astype(np.float64)) + w.time * s.in_scope)
    if name == "generative":
        return total
    if name == "generative+bm25":
        return total + w.bm25 * minmax(s.bm25_keys)
    raise MemstreamError(f"unknown retriever {name!r}; use one of {', '.join(RETRIEVERS)}")

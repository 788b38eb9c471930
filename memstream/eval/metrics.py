"""Retrieval metrics as the LongMemEval paper defines them, for one ranked list at a time."""

from __future__ import annotations

import math
from collections.abc import Sequence


def recall_any(ranked: Sequence[int], evidence: frozenset[int], k: int) -> float:
    """1 if at least one evidence item is in the top k."""
    return float(any(i in evidence for i in ranked[:k]))


def recall_all(ranked: Sequence[int], evidence: frozenset[int], k: int) -> float:
    """1 if every evidence item is in the top k."""
    return float(evidence.issubset(ranked[:k]))


def ndcg(ranked: Sequence[int], evidence: frozenset[int], k: int) -> float:
    """Binary-relevance NDCG@k: evidence items are relevant, everything else is not."""
    dcg = sum(1.0 / math.log2(r + 2) for r, i in enumerate(ranked[:k]) if i in evidence)
    ideal = sum(1.0 / math.log2(r + 2) for r in range(min(len(evidence), k)))
    return dcg / ideal if ideal else 0.0

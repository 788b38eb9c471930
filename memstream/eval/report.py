"""Reading evaluation results: a table with retrievers as rows (the recall@k plot is ``memstream.plots.recall``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def table(results: Sequence[dict[str, Any]], ks: Sequence[int]) -> str:
    """Retrievers as rows; recall_any, recall_all and NDCG at each k; context share at the largest k."""
    if not results:
        return "(no results)"
    head = results[0]
    kmax = max(ks)
    cols = [f"{m}@{k}" for k in ks for m in ("recall_any", "recall_all", "ndcg")]
    short = {"recall_any": "any", "recall_all": "all", "ndcg": "ndcg"}
    names = [short[c.split("@")[0]] + "@" + c.split("@")[1] for c in cols]
    lines = [f"{head['dataset']} ({head['granularity']}), {head['n']} questions, embedder {head['embedder']}",
             f"{'retriever':<16}" + "".join(f"{n:>9}" for n in names) + f"{'ctx@' + str(kmax):>9}"]
    for r in results:
        share = r.get(f"context_share_median@{kmax}")
        lines.append(f"{r['retriever']:<16}" + "".join(f"{r[c]:>9.3f}" for c in cols)
                     + (f"{share:>9.1%}" if share is not None else f"{'-':>9}"))
    if head.get("skipped"):
        lines.append("skipped: " + "; ".join(f"{v} {k}" for k, v in head["skipped"].items()))
    return "\n".join(lines)

"""Reading evaluation results: tables with retrievers or designs as rows (plots: ``memstream.plots``)."""

from __future__ import annotations

from collections.abc import Sequence

from memstream.eval.rows import DesignRow, Passed, ScenarioRow
from memstream.files import JsonObject


def table(results: Sequence[JsonObject], ks: Sequence[int]) -> str:
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


def designs_table(rows: Sequence[DesignRow]) -> str:
    """Designs and budgets as rows: judged accuracy, F1, evidence in context (verbatim, by provenance),
    context tokens, cost of writing per question, and context assembly time."""
    if not rows:
        return "(no results)"
    head = rows[0]
    lines = [f"{head['dataset']}, {head['n']} questions ({head['n_evidence']} with evidence), answer "
             f"{head['answer_model']}, judge {head['judge']}, embedder {head['embedder']}",
             f"{'design':<15}{'budget':>7}{'judge':>7}{'F1':>7}{'EM':>6}{'ev.verb':>8}{'ev.prov':>8}"
             f"{'ctx tok':>9}{'cut':>6}{'w.calls':>8}{'w.tok':>8}{'asm ms':>8}"]
    for r in rows:
        lines.append(f"{r['design']:<15}{r['budget']!s:>7}{r['judge_accuracy']:>7.3f}{r['f1']:>7.3f}"
                     f"{r['exact_match']:>6.3f}{r['evidence_verbatim']:>8.3f}{r['evidence_reachable']:>8.3f}"
                     f"{r['context_tokens']:>9.0f}{r['cut_per_question']:>6.1f}{r['write_calls_per_question']:>8.2f}"
                     f"{r['write_tokens_per_question']:>8.0f}{r['assembly_ms']:>8.2f}")
    types = sorted({c for r in rows for c in r.get("per_category", {})})
    if types:
        lines.append("per question type: evidence verbatim / judge")
        lines.append(f"{'design':<15}{'budget':>7}" + "".join(f"{t[:17]:>18}" for t in types))
        for r in rows:
            cells = [r["per_category"].get(t) for t in types]
            lines.append(f"{r['design']:<15}{r['budget']!s:>7}" + "".join(
                f"{c['evidence_verbatim']:>11.3f} /{c['judge_accuracy']:.2f}" if c else f"{'-':>18}" for c in cells))
    if types:
        lines.append("per question type: evidence reachable through provenance")
        lines.append(f"{'design':<15}{'budget':>7}" + "".join(f"{t[:17]:>18}" for t in types))
        for r in rows:
            cells = [r["per_category"].get(t) for t in types]
            lines.append(f"{r['design']:<15}{r['budget']!s:>7}" + "".join(
                f"{c['evidence_reachable']:>18.3f}" if c else f"{'-':>18}" for c in cells))
    costs = {r["design"]: r for r in rows if "write_calls_per_turn" in r}
    if costs:
        lines.append("write cost per turn: " + "; ".join(f"{d} {r['write_calls_per_turn']:.2f} calls, "
                                                         f"{r['write_tokens_per_turn']:.0f} tokens"
                                                         for d, r in costs.items()))
    windowed = sum(r["cut_to_window"] for r in rows)
    if windowed:
        lines.append(f"{windowed} contexts were assembled to fit the answer model's window instead of their budget")
    if head.get("skipped"):
        lines.append("skipped: " + "; ".join(f"{v} {k}" for k, v in head["skipped"].items()))
    return "\n".join(lines)


def scenarios_table(rows: Sequence[ScenarioRow]) -> str:
    """Scenarios and designs as rows: facts matched (over every turn, at the end, lost), questions passed by
    kind, the design's cost per turn, what it counts of its upkeep, and the context tokens a question got."""
    if not rows:
        return "(no results)"
    head = rows[0]
    lines = [f"scenario evals at {head['budget']} tokens, answer {head['answer_model']}, judge {head['judge']}, "
             f"embedder {head['embedder']}",
             f"{'scenario':<19}{'design':<15}{'turns':>6}{'matched':>8}{'at end':>7}{'lost':>5}{'depend.':>9}"
             f"{'corrupt.':>9}{'calls/t':>8}{'tok/t':>7}{'ms/t':>7}{'compact':>8}{'dropped':>8}{'ctx tok':>8}"]

    def passed(x: Passed) -> str:
        return f"{x['passed']}/{x['n']}"

    def count(x: int | None) -> str:
        return "-" if x is None else str(x)

    for r in rows:
        c = r["cost_per_turn"]
        lines.append(f"{r['scenario'][:18]:<19}{r['design']:<15}{r['turns']:>6}{r['matched']:>8.3f}"
                     f"{r['matched_at_end']:>7.2f}{r['lost']:>5}{passed(r['memory_dependent']):>9}"
                     f"{passed(r['memory_corruptible']):>9}{c['calls']:>8.2f}{c['tokens']:>7.0f}"
                     f"{c['seconds'] * 1000:>7.1f}{count(r['compactions']):>8}{count(r['dropped_edits']):>8}"
                     f"{r['context_tokens']:>8.0f}")
    lost = [(r["scenario"], r["design"], f["fact"], f["lost_at"]) for r in rows for f in r["per_fact"] if f["lost_at"]]
    if lost:
        lines.append("facts lost (scenario, design: fact at turn): " + "; ".join(
            f"{s}, {d}: {f} at {t}" for s, d, f, t in lost[:12]) + (f"; ... {len(lost) - 12} more" if len(lost) > 12
                                                                        else ""))
    return "\n".join(lines)

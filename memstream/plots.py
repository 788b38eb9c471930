"""Plots that show *why* a memory was recalled: score components, decay, importance, timelines,
citation graphs, weight sensitivity and benchmark recall. PNG or SVG by extension.

Every function returns a matplotlib Figure made without pyplot (no global state, no
display needed), so the CLI runs headless, a notebook shows it, and a test can read it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import matplotlib
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from memstream.errors import MemstreamError
from memstream.files import JsonObject
from memstream.stream import REFLECTION, MemoryStream, Weights

if TYPE_CHECKING:
    from memstream.eval import DesignRow, ScenarioRow
    from memstream.sim import Attendance, Diffusion, InterviewAnswer, Network
    from memstream.sweep import Cell

#: What :func:`designs` can plot against context tokens: one of a design row's scores.
DesignMeasure = Literal["judge_accuracy", "f1", "exact_match", "evidence_verbatim", "evidence_reachable"]

matplotlib.rcParams["svg.fonttype"] = "none"  # keep text as text in SVG files
COLOURS = {"recency": "#4C72B0", "importance": "#DD8452", "relevance": "#55A868", "time": "#8172B3"}
KIND_COLOURS = {"observation": "#4C72B0", "reflection": "#C44E52", "plan": "#8172B3", "dialogue": "#55A868"}


def _design_colours() -> Any:
    """The ten colours of matplotlib's tab10, one per design in order (a listed colormap; the registry
    types every colormap as the general kind, which has no list of colours)."""
    tab10 = matplotlib.colormaps["tab10"]
    assert isinstance(tab10, ListedColormap)
    return tab10.colors


def check_output(path: str | Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg"):
        raise MemstreamError(f"output {path} must end in .png or .svg")
    return path


def save(fig: Figure, path: str | Path) -> Path:
    path = check_output(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def _figure(width: float, height: float) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


def _label(text: str, kind: str, width: int = 48) -> str:
    short = textwrap.shorten(" ".join(text.split()), width=width, placeholder="…")
    return f"{short} [{kind}]"


def components(stream: MemoryStream, agent: str, query: str, *, k: int = 10, at: datetime | None = None,
               weights: Weights | None = None) -> Figure:
    """The top-k as horizontal stacked bars of weighted recency, importance and relevance (best on top).

    With a time weight, a fourth segment shows which memories fall in the span the query names.
    """
    now = at or stream.latest_time(agent)
    recalls = stream.retrieve(agent, query, now=now, k=k, weights=weights, touch=False)
    w = recalls[0].weights
    fig, ax = _figure(10, 0.45 * len(recalls) + 1.6)
    y = np.arange(len(recalls))[::-1]
    left = np.zeros(len(recalls))
    parts = [("recency", w.recency), ("importance", w.importance), ("relevance", w.relevance)]
    for name, weight in parts + ([("time", w.time)] if w.time else []):
        values = np.array([getattr(r, name) * weight for r in recalls])
        ax.barh(y, values, left=left, color=COLOURS[name], label=f"{name} × {weight:g}")
        left += values
    ax.set_yticks(y, [_label(r.memory.text, r.memory.kind) for r in recalls], fontsize=8)
    ax.set_xlabel("weighted, min-max normalised score (bar length = total)")
    ax.set_title(f"Why {agent} recalls these for “{textwrap.shorten(query, 50)}” (at {now:%Y-%m-%d %H:%M})")
    ax.legend(loc="lower right", fontsize=8)
    return fig


def decay(stream: MemoryStream, agent: str, *, decays: tuple[float, ...] = (0.99, 0.995, 0.999),
          at: datetime | None = None) -> Figure:
    """Recency against hours since last access for each decay, with the agent's memories on the curves."""
    now = at or stream.latest_time(agent)
    memories = stream.memories(agent)
    hours = np.array([(now - m.last_accessed_at).total_seconds() / 3600 for m in memories])
    hours = np.maximum(hours, 0)
    span = max(float(hours.max()) * 1.1, 24.0)
    grid = np.linspace(0, span, 300)
    fig, ax = _figure(8, 4.5)
    for d in decays:
        line, = ax.plot(grid, d ** grid, label=f"decay {d:g} per hour")
        ax.scatter(hours, d ** hours, s=14, color=line.get_color(), alpha=0.7)
    ax.set_xlabel("simulated hours since last access")
    ax.set_ylabel("recency = decay ** hours")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Recency of {agent}'s {len(memories)} memories at {now:%Y-%m-%d %H:%M} (dots: memories)")
    ax.legend(fontsize=8)
    return fig


def importance(stream: MemoryStream, agent: str | None = None) -> Figure:
    """How many memories of each kind received each importance rating."""
    owners = [agent] if agent else stream.owners()
    memories = [m for o in owners for m in stream.memories(o)]
    kinds = sorted({m.kind for m in memories})
    fig, ax = _figure(8, 4.5)
    width = 0.8 / max(len(kinds), 1)
    for i, kind in enumerate(kinds):
        counts = np.bincount([m.importance for m in memories if m.kind == kind], minlength=11)[1:]
        ax.bar(np.arange(1, 11) + (i - (len(kinds) - 1) / 2) * width, counts, width,
               label=kind, color=KIND_COLOURS.get(kind))
    ax.set_xticks(range(1, 11))
    ax.set_xlabel("importance rating (1 mundane … 10 poignant)")
    ax.set_ylabel("memories")
    ax.set_title(f"Importance by kind: {agent or f'{len(owners)} agents'}, {len(memories)} memories")
    ax.legend(fontsize=8)
    return fig


def timeline(stream: MemoryStream, agent: str, *, threshold: int = 150) -> Figure:
    """Memories over simulated time by kind, reflections marked, and the reflection trigger's sum."""
    memories = stream.memories(agent)
    kinds = sorted({m.kind for m in memories})
    lane = {k: i for i, k in enumerate(kinds)}
    fig, ax = _figure(10, 1.0 + 0.6 * len(kinds) + 1.5)
    for kind in kinds:
        ms = [m for m in memories if m.kind == kind]
        ax.scatter([m.created_at for m in ms], [lane[kind]] * len(ms), s=[8 + 4 * m.importance for m in ms],
                   marker="*" if kind == REFLECTION else "o", color=KIND_COLOURS.get(kind), label=kind, alpha=0.7)
    ax.set_yticks(range(len(kinds)), kinds)
    ax.set_xlabel("simulated time")
    ax.set_title(f"{agent}'s memories over time (size = importance; ★ reflections)")
    total, times, sums = 0, [], []
    for m in memories:
        if m.kind == REFLECTION:  # a reflection restarts the trigger's sum
            total = 0
        elif m.kind == "observation":
            total += m.importance
        times.append(m.created_at)
        sums.append(total)
    twin = ax.twinx()
    twin.step(times, sums, where="post", color="grey", linewidth=1, label="importance since last reflection")
    twin.axhline(threshold, color="grey", linestyle=":", linewidth=1)
    twin.set_ylabel(f"trigger sum (reflects at {threshold})")
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], fontsize=8, loc="upper left")
    fig.autofmt_xdate()
    return fig


def reflections(stream: MemoryStream, agent: str, *, memory: int | None = None) -> Figure:
    """The citation graph from reflections (top) down to the observations they rest on (bottom)."""
    by_id = {m.id: m for m in stream.memories(agent)}
    if memory is not None:
        if memory not in by_id:
            raise MemstreamError(f"no memory {memory} for owner {agent!r}")
        roots = [memory]
    else:
        roots = [m.id for m in by_id.values() if m.kind == REFLECTION]
    if not roots:
        raise MemstreamError(f"{agent} has no reflections yet; run `memstream reflect` first")
    nodes, stack = set(), list(roots)
    while stack:
        mid = stack.pop()
        if mid not in nodes:
            nodes.add(mid)
            stack.extend(c for c in by_id[mid].cites if c in by_id)
    depth = {n: int(by_id[n].metadata.get("depth", 0)) for n in nodes}
    layers: dict[int, list[int]] = {}
    for n in sorted(nodes):
        layers.setdefault(depth[n], []).append(n)
    pos = {n: (i - (len(ids) - 1) / 2, d) for d, ids in layers.items() for i, n in enumerate(ids)}
    fig, ax = _figure(max(6, 1.6 * max(len(v) for v in layers.values())), 2.2 * len(layers) + 1.5)
    for n in nodes:
        for c in by_id[n].cites:
            if c in pos:
                ax.annotate("", xy=pos[c], xytext=pos[n], arrowprops={"arrowstyle": "->", "color": "grey",
                                                                      "alpha": 0.6})
    for n, (x, y) in pos.items():
        m = by_id[n]
        ax.scatter([x], [y], s=60 + 10 * m.importance, color=KIND_COLOURS.get(m.kind), zorder=3)
        below = m.kind != REFLECTION
        ax.annotate(f"[{n}] " + textwrap.shorten(m.text, 30, placeholder="…"), (x, y), textcoords="offset points",
                    xytext=(0, -10 if below else 10), ha="right" if below else "left", va="top" if below else "bottom",
                    rotation=25, fontsize=7)
    ax.set_yticks(sorted(layers), [f"depth {d}" for d in sorted(layers)])
    ax.set_xticks([])
    ax.set_title(f"{agent}: what {len(roots)} reflection(s) rest on (arrows point to cited memories)", pad=40)
    ax.set_ylim(-0.7, max(layers) + 0.7)
    ax.margins(x=0.15)
    return fig


def weight_grid(step: float = 0.25) -> list[tuple[float, float, float]]:
    """(recency, importance, relevance) weights on the simplex, in steps of ``step``."""
    n = round(1 / step)
    return [(i * step, j * step, (n - i - j) * step) for i in range(n + 1) for j in range(n + 1 - i)]


def weights(stream: MemoryStream, agent: str, query: str, *, k: int = 5, at: datetime | None = None,
            step: float = 0.25) -> Figure:
    """Which memories stay in the top k as the three weights vary (rows: memories; columns: weights)."""
    now = at or stream.latest_time(agent)
    grid = weight_grid(step)
    tops = [[r.memory for r in stream.retrieve(agent, query, now=now, k=k, touch=False,
                                               weights=Weights(recency=a, importance=b, relevance=c))]
            for a, b, c in grid]
    ids = sorted({m.id for top in tops for m in top}, key=lambda i: -sum(i in [m.id for m in t] for t in tops))
    text = {m.id: m for top in tops for m in top}
    ranks = np.full((len(ids), len(grid)), np.nan)
    for col, top in enumerate(tops):
        for rank, m in enumerate(top, 1):
            ranks[ids.index(m.id), col] = rank
    fig, ax = _figure(0.45 * len(grid) + 4, 0.4 * len(ids) + 2)
    image = ax.imshow(ranks, cmap="viridis_r", vmin=1, vmax=k, aspect="auto")
    ax.set_yticks(range(len(ids)), [_label(text[i].text, text[i].kind, 40) for i in ids], fontsize=7)
    ax.set_xticks(range(len(grid)), [f"{a:g}/{b:g}/{c:g}" for a, b, c in grid], rotation=90, fontsize=7)
    ax.set_xlabel("weights: recency / importance / relevance")
    ax.set_title(f"Top-{k} for “{textwrap.shorten(query, 40)}” as the weights vary (blank: not in the top {k})")
    fig.colorbar(image, ax=ax, label="rank")
    return fig


def recall(results: Sequence[JsonObject]) -> Figure:
    """recall_any@k against k per retriever, from ``memstream eval --json`` output."""
    if not results or "recall_any_curve" not in results[0]:
        raise MemstreamError("not memstream eval output (a list of results with recall_any_curve)")
    fig, ax = _figure(7, 4.5)
    for r in results:
        curve = r["recall_any_curve"]
        ax.plot(range(1, len(curve) + 1), curve, marker="o", markersize=3, label=r["retriever"])
    head = results[0]
    ax.set_title(f"Recall on {head['dataset']} ({head['granularity']}), n = {head['n']}, {head['embedder']}")
    ax.set_xlabel("k (memories retrieved)")
    ax.set_ylabel("recall_any@k (share of questions with evidence in the top k)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return fig


# -- what emerged in runs (from memstream.sim.analysis.measures results) ----------------------------------

def pareto(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both axes (fewer tokens, a higher measure), by tokens."""
    front: list[tuple[float, float]] = []
    for x, y in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or y > front[-1][1]:
            front.append((x, y))
    return front


def designs(rows: Sequence[DesignRow], *, measure: DesignMeasure = "evidence_verbatim") -> Figure:
    """``measure`` against mean context tokens, one line per design through its budgets, the Pareto front
    dashed; one panel for all questions and one per question type (``memstream eval --design --json``)."""
    types = sorted({c for r in rows for c in r.get("per_category", {})})
    panels = ["all", *types]
    cols = min(3, len(panels))
    fig = Figure(figsize=(4.2 * cols, 3.4 * ((len(panels) + cols - 1) // cols)), layout="constrained")
    axes = fig.subplots((len(panels) + cols - 1) // cols, cols, squeeze=False).ravel()
    names = list(dict.fromkeys(r["design"] for r in rows))
    colours = dict(zip(names, _design_colours(), strict=False))
    for ax, panel in zip(axes, panels, strict=False):
        points = []
        for name in names:
            mine = [r for r in rows if r["design"] == name and (panel == "all" or panel in r.get("per_category", {}))]
            xy = sorted((r["context_tokens"], r[measure] if panel == "all" else r["per_category"][panel][measure])
                        for r in mine)
            if xy:
                ax.plot(*zip(*xy, strict=True), marker="o", color=colours[name], label=name)
                points += xy
        front = pareto(points)
        if front:
            ax.plot(*zip(*front, strict=True), ls="--", color="grey", lw=1, label="Pareto front")
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        n = next((r["n"] if panel == "all" else r["per_category"][panel]["n"] for r in rows
                  if panel == "all" or panel in r.get("per_category", {})), 0)
        ax.set_title(f"{panel} (n={n})", fontsize=9)
        ax.set_xlabel("context tokens (mean)")
        ax.set_ylabel(measure.replace("_", " "))
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7)
    return fig


def scenarios(rows: Sequence[ScenarioRow]) -> Figure:
    """Facts matched turn by turn, one line per design, one panel per scenario; dotted lines where a
    session opens (``memstream eval scenarios --json`` output)."""
    names = list(dict.fromkeys(r["scenario"] for r in rows))
    cols = min(2, len(names))
    grid = (len(names) + cols - 1) // cols
    fig = Figure(figsize=(5.6 * cols, 3.4 * grid), layout="constrained")
    axes = fig.subplots(grid, cols, squeeze=False).ravel()
    designs_ = list(dict.fromkeys(r["design"] for r in rows))
    colours = dict(zip(designs_, _design_colours(), strict=False))
    for ax, name in zip(axes, names, strict=False):
        mine = [r for r in rows if r["scenario"] == name]
        turns = mine[0]["per_turn"]
        for i, (before, turn) in enumerate(zip([None, *turns], turns, strict=False)):
            if before is not None and before["session"] != turn["session"]:
                ax.axvline(i + 0.5, color="grey", ls=":", lw=0.8)
        for r in mine:
            share = [t["matched"] / t["live"] if t["live"] else np.nan for t in r["per_turn"]]
            ax.plot(range(1, len(share) + 1), share, marker=".", color=colours[r["design"]],
                    label=f"{r['design']} ({r['matched']:.2f}, {r['lost']} lost)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"{name} at {mine[0]['budget']} tokens", fontsize=9)
        ax.set_xlabel("turn (dotted: a session opens)")
        ax.set_ylabel("facts held matched")
        ax.legend(fontsize=7, loc="lower left")
    for ax in axes[len(names):]:
        ax.set_visible(False)
    return fig


def diffusion(results: Sequence[Diffusion]) -> Figure:
    """The share of agents who know the fact, hour by hour, one line per run."""
    fig, ax = _figure(7, 4)
    facts = list(dict.fromkeys(r["fact"] for r in results))
    for r in results:
        times = [datetime.fromisoformat(h["time"]) for h in r["by_hour"]]
        name = Path(r["run"]).name if len(facts) == 1 else f"{textwrap.shorten(r['fact'], 30)}, {Path(r['run']).name}"
        ax.step(times, [h["share"] for h in r["by_hour"]], where="post", marker="o", markersize=3,
                label=f"{name} (final {r['final_share']:.0%})")
    ax.set_title(textwrap.shorten("Who knows: " + "; ".join(facts), 70))
    ax.set_xlabel("simulated time")
    ax.set_ylabel(f"share of the {results[0]['agents']} agents")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")
    fig.autofmt_xdate()
    return fig


def network(result: Network) -> Figure:
    """Who knows whom at the start and the end of a run, agents on a circle."""
    fig = Figure(figsize=(11, 5.5), layout="constrained")
    names = sorted({n for e in result["edges_start"] + result["edges_end"] for n in e})
    angle = {n: 2 * np.pi * i / max(len(names), 1) for i, n in enumerate(names)}
    xy = {n: (np.cos(a), np.sin(a)) for n, a in angle.items()}
    small = len(names) <= 40
    sides = (("start", result["edges_start"], result["density_start"]),
             ("end", result["edges_end"], result["density_end"]))
    for ax, (title, edges, density) in zip(fig.subplots(1, 2), sides, strict=True):
        for a, b in edges:
            ax.plot(*zip(xy[a], xy[b], strict=True), color="#4C72B0", alpha=0.35, linewidth=0.8)
        ax.scatter([p[0] for p in xy.values()], [p[1] for p in xy.values()], s=30 if small else 4, color="#DD8452",
                   zorder=3)
        if small:
            for n, (x, y) in xy.items():
                ax.annotate(n.split()[0], (x * 1.08, y * 1.08), ha="center", va="center", fontsize=7)
        ax.set_title(f"{title}: density {density:.3f}, {len(edges)} pairs")
        ax.set_aspect("equal")
        ax.axis("off")
    return fig


def attendance(results: Sequence[Attendance]) -> Figure:
    """Per run: agents present at the place during the window, who knew beforehand, and both."""
    fig, ax = _figure(max(7, 3 + 2 * len(results)), 4)
    labels = ["knew", "planned", "present", "present and knew", "present and planned"]
    width = 0.8 / max(len(results), 1)
    for i, r in enumerate(results):
        values = [len(r.get("knew", [])), len(r["planned"]), len(r["present"]), r.get("attended_and_knew", 0),
                  r["planned_and_came"]]
        bars = ax.bar(np.arange(len(labels)) + i * width, values, width, label=Path(r["run"]).name)
        ax.bar_label(bars, fontsize=8)
    ax.set_xticks(np.arange(len(labels)) + width * (len(results) - 1) / 2, labels)
    ax.set_ylabel("agents")
    r0 = results[0]
    ax.set_title(f"{r0['place']}, {r0['from'][:16].replace('T', ' ')} to {r0['to'][11:16]}")
    ax.legend(fontsize="small")
    return fig


def interview_scores(answers: Sequence[InterviewAnswer]) -> Figure:
    """Mean judge score per category, one bar per run (from ``memstream measure interviews --judge``)."""
    scored = [a for a in answers if "score" in a]
    if not scored:
        raise MemstreamError("no scored answers to plot; give --judge MODEL")
    runs = list(dict.fromkeys(Path(a["run"]).name for a in scored))
    categories = list(dict.fromkeys(a["category"] for a in scored))
    fig, ax = _figure(max(6, 1.4 * len(categories) * max(1, len(runs) / 2)), 4)
    width = 0.8 / len(runs)
    for i, run in enumerate(runs):
        means = [np.mean([a["score"] for a in scored if Path(a["run"]).name == run and a["category"] == c] or [0])
                 for c in categories]
        ax.bar(np.arange(len(categories)) + i * width, means, width, label=run)
    ax.set_xticks(np.arange(len(categories)) + width * (len(runs) - 1) / 2, categories)
    ax.set_ylim(0, 5)
    ax.set_ylabel("mean judge score (1-5)")
    ax.set_title("Interview answers by category")
    ax.legend(fontsize="small")
    return fig


def sweep_against(cells: Sequence[Cell], cost: str) -> Figure:
    """Each measure of a sweep against one of its costs (``calls_per_agent_step``, ``tokens_per_agent_step``,
    ``store_bytes_per_agent``, ``context_tokens_per_recall``), a point per grid cell (a design, say) with its 95%
    intervals both ways, labelled by the cell's values: what a memory does against what it costs."""
    keys = list(dict.fromkeys((name, key) for c in cells for name, ks in c["measures"].items() for key in ks))
    if not keys:
        raise MemstreamError("the sweep measured nothing; give its spec measures")
    costs = sorted({k for c in cells for k in c.get("cost", {})})
    if cost not in costs:
        raise MemstreamError(f"the sweep's runs have no cost {cost!r}; one of: {', '.join(costs) or 'none (a sweep '}"
                             + ("" if costs else "made before costs were kept: --resume it)"))
    columns = min(3, len(keys))
    rows = -(-len(keys) // columns)
    fig = Figure(figsize=(4.2 * columns, 3.4 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, columns)).ravel()
    labels = [", ".join(str(v) for v in c["params"].values()) or "base" for c in cells]
    for ax, (name, key) in zip(axes, keys, strict=False):
        for c, label in zip(cells, labels, strict=True):
            x, y = c.get("cost", {}).get(cost), c["measures"].get(name, {}).get(key)
            if not x or not y:
                continue
            ax.errorbar([x["mean"]], [y["mean"]], xerr=[[x["mean"] - x["ci95"][0]], [x["ci95"][1] - x["mean"]]],
                        yerr=[[y["mean"] - y["ci95"][0]], [y["ci95"][1] - y["mean"]]], fmt="o", capsize=3,
                        color="#4C72B0")
            ax.annotate(label, (x["mean"], y["mean"]), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.set_title(f"{name}: {key}", fontsize=9)
        ax.set_xlabel(cost.replace("_", " "), fontsize=8)
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    return fig


def sweep(cells: Sequence[Cell]) -> Figure:
    """Each measure of a sweep per grid cell: the mean over its replicates with a 95% interval."""
    keys = list(dict.fromkeys((name, key) for c in cells for name, ks in c["measures"].items() for key in ks))
    if not keys:
        raise MemstreamError("the sweep measured nothing; give its spec measures")
    fig = Figure(figsize=(max(6, 1.2 * len(cells) + 2), 2.6 * len(keys)), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(keys), 1))
    labels = [", ".join(f"{k}={v}" for k, v in c["params"].items()) or "base" for c in cells]
    for ax, (name, key) in zip(axes, keys, strict=True):
        stats = [c["measures"].get(name, {}).get(key) for c in cells]
        means = [s["mean"] if s else np.nan for s in stats]
        low = [s["mean"] - s["ci95"][0] if s else 0 for s in stats]
        high = [s["ci95"][1] - s["mean"] if s else 0 for s in stats]
        ax.bar(range(len(cells)), means, yerr=[low, high], capsize=4, color="#4C72B0", alpha=0.8)
        for i, s in enumerate(stats):
            if s:
                ax.scatter([i] * len(s["values"]), s["values"], color="#DD8452", s=12, zorder=3)
        ax.set_title(f"{name}: {key} (mean, 95% interval, runs as dots)", fontsize=9)
        ax.set_xticks(range(len(cells)), labels, fontsize=8)
    return fig

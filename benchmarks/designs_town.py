"""The town on every memory design, in one process on one seed: wall time against the stream's, and each design's cost.

Each design runs the default town (residents generated beyond its 25) from 06:00 for ``--hours`` simulated hours of
10-second steps, in a fresh run directory, exactly as ``memstream run --design D`` does (offline chat model, the
embedder, call cache, hourly checkpoints and, on a design, an hourly copy of its store), one after the other in
this process on the same seed, BLAS pinned to one thread. The stream runs first (the ratio's denominator, and
the process's warm-up); the order of the others is ``--designs``'.

    python benchmarks/designs_town.py [--agents 1000] [--hours 1] [--designs stream,recent,full,...] [--embedder NAME]
    python benchmarks/designs_town.py --agents 25 --hours 1 --embedder hash --profile prof.out   # a quick look

Per design: ``wall_s`` (the run's own, as its metrics say; ``total_s`` is the whole call, start-up and the last
checkpoint included), ``vs_stream`` (``wall_s`` over the stream's), model calls per agent-step (and tokens, every
purpose), the design's contexts per agent-step and their tokens per recall (the stream's retrievals are not
metered: empty), the bytes the memory's store holds per agent (``memstream.sweep.study.cost``: SQLite pages in use),
``rss_mb`` the process's resident memory after the run and ``peak_rss_mb`` its peak so far (monotone across the
designs of one process: read a design's own peak in a process of its own, ``--designs stream,D``).

``--results [FILE]`` adds the rows to ``benchmarks/results/designs_town.json`` (or FILE), which the docs' results
page shows. ``--profile FILE`` writes cProfile's statistics of the whole call to FILE and prints the top 25 by
cumulative time.

Target (issue #41): 1,000 agents x 1 h for each design at most 3x the stream's wall time, on 2 cores; the stream's
model calls per agent-step at most 0.03.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import pstats
import resource
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from memstream.designs import design_names
from memstream.errors import MemstreamError
from memstream.sim import RunConfig, start_run
from memstream.sim.memory import STREAM_DESIGN
from memstream.sweep.study import cost

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

TITLE = "The town on every memory design"
ABOUT = ("The default town from 06:00, 10-second steps, offline (the rule-based chat model, call cache, hourly "
         "checkpoints and design-store copies), BLAS on one thread; every design in one process on seed 0, the "
         "stream first. `vs_stream` is a design's wall time over the stream's; `peak_rss_mb` is monotone across "
         "the designs of one process.")
#: Every design the town runs on, the stream first (the ratio's denominator).
DEFAULT_DESIGNS = "stream,recent,full,buffer-summary,vector,tiered,letta,profile,facts"


def _rss_mb() -> float:
    """The process's resident memory now (VmRSS), in MB."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def run_design(design: str, agents: int, hours: float, embedder: str, start: datetime, seed: int) -> dict[str, Any]:
    """One run of ``agents`` on ``design`` in a fresh directory: its row of figures."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        config = RunConfig(agents=agents, start=start, hours=hours, embedder=embedder, seed=seed, design=design)
        began = time.perf_counter()
        m = start_run(config, folder, progress=False).metrics
        total = time.perf_counter() - began
        spent = cost(folder)
    memory = m.get("memory") or {}
    steps = max(1, int(m["agent_steps"]))
    return {"design": design, "agents": agents, "sim_hours": m["sim_hours"], "wall_s": m["wall_s"],
            "total_s": round(total, 2), "vs_stream": None, "agent_steps_per_s": m["agent_steps_per_s"],
            "calls_per_agent_step": m["calls_per_agent_step"], "model_calls": m["model_calls"],
            "tokens_per_agent_step": spent["tokens_per_agent_step"],
            "contexts_per_agent_step": round(int(memory["contexts"]) / steps, 5) if "contexts" in memory else None,
            "context_tokens_per_recall": spent.get("context_tokens_per_recall"),
            "consolidations": memory.get("consolidations"), "memories": m["memories"],
            "store_bytes_per_agent": spent["store_bytes_per_agent"], "rss_mb": _rss_mb(),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def designs_of(text: str) -> list[str]:
    """The designs asked for, the stream first (added if left out), each once; an unknown one: one line."""
    try:
        asked = list(dict.fromkeys(design_names(text)))
    except MemstreamError as e:
        raise SystemExit(f"--designs: {e}") from None
    return [STREAM_DESIGN, *(d for d in asked if d != STREAM_DESIGN)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--designs", default=DEFAULT_DESIGNS, help="comma list (the stream is always run, first)")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", default="2023-02-13T06:00:00-08:00")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", metavar="FILE", help="write cProfile's statistics of the whole call to FILE")
    add_results_flag(parser, "designs_town")
    args = parser.parse_args(argv)
    designs = designs_of(args.designs)
    profiler = cProfile.Profile() if args.profile else None
    rows: list[dict[str, Any]] = []
    with threadpool_limits(limits=1):
        if profiler:
            profiler.enable()
        for design in designs:
            row = run_design(design, args.agents, args.hours, args.embedder, datetime.fromisoformat(args.start),
                             args.seed)
            row["vs_stream"] = round(row["wall_s"] / max(rows[0]["wall_s"] if rows else row["wall_s"], 1e-9), 2)
            rows.append(row)
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        if profiler:
            profiler.disable()
    if profiler:
        profiler.dump_stats(args.profile)
        pstats.Stats(args.profile).sort_stats("cumulative").print_stats(25)
    worst = max(rows, key=lambda r: r["vs_stream"])
    print(f"slowest against the stream: {worst['design']} at {worst['vs_stream']}x (target: at most 3x)", flush=True)
    if args.results is not None:
        record(args.results, "designs_town", TITLE, rows, about=ABOUT,
               argv=None if argv is None else ["designs_town.py", *argv])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Simulation throughput on the offline defaults, and against an endpoint with latency.

Each agent count runs the default town (residents generated beyond its 25) from
06:00 for ``--hours`` simulated hours of 10-second steps, in a fresh run directory,
exactly as ``memstream run`` does (offline chat model, default embedder, call cache,
hourly checkpoints). BLAS is pinned to one thread.

    python benchmarks/simulation.py [--agents 25,200,1000] [--hours H] [--embedder NAME] [--json]
    python benchmarks/simulation.py --agents 1000 --latency-ms 500 --concurrency 64 [--http]

``--results [FILE]`` adds the rows to ``benchmarks/results/simulation.json`` (``simulation_latency.json`` with
``--latency-ms``) or FILE, which the docs' results page shows.

With ``--latency-ms`` the offline rules answer each request after that delay with at most
``--concurrency`` in flight (``memstream.testing``): in process by default, or with
``--http`` through an OpenAI-compatible server on 127.0.0.1 and memstream's own HTTP client.
``rounds`` counts the sequential waits on the model (batches that reached it); each costs at
least the latency, so rounds per step set the floor of the wall time. ``rss_mb`` is the process's
peak resident memory so far (run one agent count per process to read it for that count alone).

Targets on 2 cores: 25 agents for a simulated day (``--agents 25 --hours 24``) under
5 minutes; 1,000 agents for a simulated hour under 10 minutes offline, and under 5 minutes
at ``--latency-ms 500 --concurrency 64``; at most 0.03 model calls per agent-step.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from threadpoolctl import threadpool_limits

from memstream.models.openai_backend import OpenAIChat
from memstream.sim import RunConfig, start_run
from memstream.testing import LatencyChat, OfflineRulesServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import path_for, record  # benchmarks/ is not a package

TITLE, LATENCY_TITLE = "Simulation throughput", "Simulation against an endpoint with latency"
ABOUT = ("Offline defaults (the rule-based chat model, MiniLM, call cache, hourly checkpoints), the default town "
         "from 06:00, 10-second steps, BLAS on one thread; one agent count per process from 1,000 up, so `rss_mb` "
         "is that count's own peak. This machine's timings wander by about 15% from run to run.")
LATENCY_ABOUT = ("1,000 agents from 06:00 for one simulated hour, MiniLM, 2 cores; the offline rules answer each request "
                 "after `latency_ms` with at most `concurrency` in flight, in process or (`http`) through an "
                 "OpenAI-compatible server on 127.0.0.1 and memstream's own client. A round is one sequential wait on the model.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="25,200,1000")
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--start", default="2023-02-13T06:00:00-08:00")
    parser.add_argument("--latency-ms", type=float, help="answer each model request after this delay")
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight (with --latency-ms)")
    parser.add_argument("--http", action="store_true", help="through an HTTP server and the OpenAI client")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--results", nargs="?", const="", metavar="FILE",
                        help="add this run's figures, command, date, machine and commit to FILE (default benchmarks/results/simulation.json, or simulation_latency.json with --latency-ms), which the docs' results page shows")
    args = parser.parse_args()
    rows = []
    with threadpool_limits(limits=1):
        for n in (int(x) for x in args.agents.split(",")):
            with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
                chat = None
                if args.latency_ms is not None and args.http:
                    server = stack.enter_context(OfflineRulesServer(args.latency_ms))
                    chat = OpenAIChat("offline-rules", base_url=server.url, api_key="none",
                                      concurrency=args.concurrency)
                elif args.latency_ms is not None:
                    chat = LatencyChat(args.latency_ms, args.concurrency)
                config = RunConfig(agents=n, start=datetime.fromisoformat(args.start), hours=args.hours,
                                   embedder=args.embedder)
                m = start_run(config, Path(tmp) / "run", chat=chat).metrics
            row = {"agents": n, "sim_hours": m["sim_hours"], "wall_s": m["wall_s"],
                   "agent_steps_per_s": m["agent_steps_per_s"], "calls_per_agent_step": m["calls_per_agent_step"],
                   "model_calls": m["model_calls"], "cache_hits": m["cache_hits"], "memories": m["memories"],
                   "latency_ms": args.latency_ms or 0, "concurrency": args.concurrency if args.latency_ms else None,
                   "http": bool(args.http and args.latency_ms is not None),
                   "rounds": m["rounds"], "rounds_per_step": m["rounds_per_step"],
                   "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
            rows.append(row)
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if args.results is not None:
        name, title, about = (("simulation", TITLE, ABOUT) if args.latency_ms is None
                              else ("simulation_latency", LATENCY_TITLE, LATENCY_ABOUT))
        record(args.results or path_for(name), name, title, rows, about=about)


if __name__ == "__main__":
    main()

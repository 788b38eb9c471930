"""Simulation throughput on the offline defaults: agent-steps per second, wall time, model calls per agent-step.

Each agent count runs the default town (residents generated beyond its 25) from
06:00 for ``--hours`` simulated hours of 10-second steps, in a fresh run directory,
exactly as ``memstream run`` does (offline chat model, default embedder, call cache,
hourly checkpoints). BLAS is pinned to one thread.

    python benchmarks/simulation.py [--agents 25,200,1000] [--hours H] [--embedder NAME] [--json]

Targets on 2 cores: 25 agents for a simulated day (``--agents 25 --hours 24``) under
5 minutes; 1,000 agents for a simulated hour under 10 minutes; at most 0.03 model
calls per agent-step.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from datetime import datetime
from pathlib import Path

from threadpoolctl import threadpool_limits

from memstream.sim.run import RunConfig, start_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="25,200,1000")
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--start", default="2023-02-13T06:00:00-08:00")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        for n in (int(x) for x in args.agents.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                config = RunConfig(agents=n, start=datetime.fromisoformat(args.start), hours=args.hours,
                                   embedder=args.embedder)
                m = start_run(config, Path(tmp) / "run").metrics
            row = {"agents": n, "sim_hours": m["sim_hours"], "wall_s": m["wall_s"],
                   "agent_steps_per_s": m["agent_steps_per_s"], "calls_per_agent_step": m["calls_per_agent_step"],
                   "model_calls": m["model_calls"], "cache_hits": m["cache_hits"], "memories": m["memories"]}
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()

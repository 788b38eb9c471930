"""A sweep on Ray against the same runs one after another, in the same process and machine.

4 runs of the default town (25 agents) for ``--hours`` simulated hours offline (seeds 0-3), first
in sequence (each run alone on the machine, MiniLM on every core), then as ``memstream sweep``
(each run a Ray task on one core, BLAS and ONNX pinned to one thread), Ray's start-up counted.

    python benchmarks/sweep.py [--runs 4] [--hours 24] [--json] [--results [FILE]]

Target on 2 cores: sweep wall time <= 0.67 x the sequential time (a speed-up of 1.5).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

from memstream.sim import start_run
from memstream.sweep import run_sweep
from memstream.sweep.spec import SweepSpec, config_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--embedder", default="minilm", help="minilm (the default's) or hash (no model: the "
                        "engine alone)")
    parser.add_argument("--json", action="store_true")
    add_results_flag(parser, "sweep")
    args = parser.parse_args()
    spec = SweepSpec(base={"hours": args.hours, "embedder": args.embedder}, grid={"seed": list(range(args.runs))},
                     measures=[{"network": {}}])
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        with threadpool_limits(limits=1):  # BLAS on one thread, as in every benchmark; MiniLM keeps its cores
            for params in spec.cells():
                config, whispers = config_of(spec, params)
                start_run(config, Path(tmp) / "sequential" / str(params["seed"]), progress=False, whispers=whispers)
        sequential = time.perf_counter() - started
        started = time.perf_counter()
        run_sweep(spec, Path(tmp) / "sweep", progress=False)
        swept = time.perf_counter() - started
    result = {"runs": args.runs, "hours": args.hours, "embedder": args.embedder, "sequential_s": round(sequential, 1),
              "sweep_s": round(swept, 1), "ratio": round(swept / sequential, 3)}
    if args.results:
        record(args.results, "sweep", "A sweep on Ray against the same runs in sequence", [result])
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.runs} runs x {args.hours:g} h: sequential {sequential:.1f} s, sweep {swept:.1f} s "
              f"({swept / sequential:.2f} of it; target <= 0.67)")


if __name__ == "__main__":
    main()

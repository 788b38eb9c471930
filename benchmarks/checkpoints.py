"""What each hourly checkpoint writes as a run grows, beside what a whole copy of the stream would write.

A run of ``--agents`` agents goes on hour by hour (``resume_run``, as ``memstream run --resume`` does); after
each hour it reports the memories, the stream file's bytes, the bytes that hour's checkpoint wrote (its
folder: ``state.json`` with the stream's mark) and, as the baseline in the same process, the bytes a checkpoint
holding a copy of the stream would have written (the stream file itself: what checkpoints wrote before the
mark). Offline chat model; BLAS pinned to one thread.

    python benchmarks/checkpoints.py [--agents 200] [--hours 24] [--embedder hash] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from threadpoolctl import threadpool_limits

from memstream.sim import RunConfig, RunDir, resume_run, start_run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--start", default="2023-02-13T06:00:00-08:00")
    parser.add_argument("--json", action="store_true")
    add_results_flag(parser, "checkpoints")
    args = parser.parse_args()
    rows = []
    with threadpool_limits(limits=1), tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        config = RunConfig(agents=args.agents, start=datetime.fromisoformat(args.start), hours=1,
                           embedder=args.embedder)
        for hour in range(1, args.hours + 1):
            began = time.perf_counter()
            if hour == 1:
                metrics = start_run(config, out, progress=False).metrics
            else:
                metrics = resume_run(out, hours=hour, progress=False).metrics
            wall = time.perf_counter() - began
            with RunDir.open(out) as run:
                point = run.checkpoints.latest()
            assert point is not None
            stream = sum(p.stat().st_size for p in out.glob("streams.db*"))
            rows.append({"hour": hour, "memories": metrics["memories"], "stream_bytes": stream,
                         "checkpoint_bytes": folder_bytes(point.folder), "copy_checkpoint_bytes": stream,
                         "ms_per_agent_step": round(1000 * wall / (args.agents * 3600 / config.step_seconds), 3),
                         "calls_per_agent_step": metrics["calls_per_agent_step"],
                         "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)})
            row = rows[-1]
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if args.results:
        record(args.results, "checkpoints", __doc__.splitlines()[0], rows)
    if len(rows) >= 2:
        last, second = rows[-1], rows[1]
        print(f"checkpoint at hour {last['hour']} / at hour 2: "
              f"{last['checkpoint_bytes'] / second['checkpoint_bytes']:.2f}x (a stream copy: "
              f"{last['copy_checkpoint_bytes'] / second['copy_checkpoint_bytes']:.2f}x)")


if __name__ == "__main__":
    main()

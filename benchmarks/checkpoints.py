"""What each hourly checkpoint writes as a run grows, beside what a whole copy of the stream would write.

A run of ``--agents`` agents goes on hour by hour (``resume_run``, as ``memstream run --resume`` does); after
each hour it reports the memories, the stream file's bytes, the bytes that hour's checkpoint wrote (its
folder: ``state.json`` with the stream's mark, and, on ``--design``, the design store's copy; and the parts of
the agents' states new in ``checkpoint/parts.db``: ``parts_bytes``) and, as the baseline in the same process,
the bytes a checkpoint holding a copy of the stream would have written (the stream file and the state written
whole: what checkpoints wrote before the mark). Offline chat model; BLAS pinned to one thread. Run with
``PYTHONPATH`` at an older tree (``git archive``), it measures that tree's checkpoints the same way.

    python benchmarks/checkpoints.py [--agents 200] [--hours 24] [--embedder hash] [--design D] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from datetime import datetime
from pathlib import Path

from threadpoolctl import threadpool_limits

from memstream.sim import RunConfig, RunDir, resume_run, start_run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

ABOUT = ("checkpoint_bytes: what the hour's checkpoint wrote (its folder and the parts new in checkpoint/parts.db: "
         "parts_bytes); copy_checkpoint_bytes: a checkpoint holding a stream copy and its state whole, in the same "
         "run. tree: the code measured (this branch; main-marks: the stream's mark, the state whole, 29c3823; "
         "before-marks: a stream copy in every checkpoint, fdd007f^). Offline chat model, hash embedder, one thread.")


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def parts(checkpoints: Path) -> dict[str, int]:
    """The parts the run's checkpoints hold, with their bytes (none in a tree from before the parts)."""
    path = checkpoints / "parts.db"
    if not path.is_file():
        return {}
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return dict(db.execute("SELECT key, LENGTH(CAST(json AS BLOB)) FROM parts"))


def whole_state_bytes(folder: Path) -> int:
    """The bytes of the checkpoint's state written whole (its parts joined in)."""
    from memstream.sim.run.checkpoints import STATE
    state = json.loads((folder / STATE).read_text(encoding="utf-8"))
    try:
        from memstream.sim.run.parts import Parts
    except ImportError:  # a tree from before the parts
        return len(json.dumps(state).encode("utf-8"))
    state["agents"] = Parts(folder.parent / "parts.db").join(state["agents"])
    return len(json.dumps(state).encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--start", default="2023-02-13T06:00:00-08:00")
    parser.add_argument("--design", default=None, help="run on this memory design (its store is copied hourly)")
    parser.add_argument("--tree", default="this", help="a name for the code measured, when PYTHONPATH points at "
                        "another tree (git archive REV | tar -x -C DIR): its rows say it")
    parser.add_argument("--json", action="store_true")
    add_results_flag(parser, "checkpoints")
    args = parser.parse_args()
    rows = []
    with threadpool_limits(limits=1), tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        config = RunConfig(agents=args.agents, start=datetime.fromisoformat(args.start), hours=1,
                           embedder=args.embedder, **({"design": args.design} if args.design else {}))
        held: dict[str, int] = {}
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
            now = parts(out / "checkpoint")
            new = sum(n for k, n in now.items() if k not in held)
            held = now
            folder = folder_bytes(point.folder)
            design = sum(p.stat().st_size for p in point.folder.glob("design.db*"))
            copy = stream + whole_state_bytes(point.folder) + design  # the stream copied, the state written whole
            rows.append({"tree": args.tree, "hour": hour, "memories": metrics["memories"], "stream_bytes": stream,
                         "checkpoint_bytes": folder + new, "parts_bytes": new, "copy_checkpoint_bytes": copy,
                         "ms_per_agent_step": round(1000 * wall / (args.agents * 3600 / config.step_seconds), 3),
                         "calls_per_agent_step": metrics["calls_per_agent_step"],
                         "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)})
            row = rows[-1]
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if args.results:
        record(args.results, "checkpoints", __doc__.splitlines()[0], rows, about=ABOUT)
    if len(rows) >= 2:
        last, second = rows[-1], rows[1]
        print(f"checkpoint at hour {last['hour']} / at hour 2: "
              f"{last['checkpoint_bytes'] / second['checkpoint_bytes']:.2f}x (a stream copy: "
              f"{last['copy_checkpoint_bytes'] / second['copy_checkpoint_bytes']:.2f}x)")


if __name__ == "__main__":
    main()

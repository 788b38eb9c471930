"""``memstream sweep``: many runs as one study, a grid of changes measured and aggregated."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from memstream.cli.flags import folder_path, positive_int


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add this module's commands to ``sub``; return their handlers by name."""
    p = sub.add_parser("sweep", help="many runs as one study (a grid of changes, measured and aggregated), on Ray")
    p.add_argument("spec", help='YAML/JSON: {"base": {run options}, "grid": {option: [values]}, "measures": '
                   '[{"diffusion": {"fact": ...}}, {"network": {}}, {"attendance": {"place", "from", "to"}}]}')
    p.add_argument("--out", type=folder_path, required=True,
                   help="the sweep's folder: runs/<name>/, results.json, runs.json")
    p.add_argument("--address", help="join this Ray cluster (default: $RAY_ADDRESS, else Ray on this machine)")
    p.add_argument("--resume", action="store_true", help="skip finished runs, resume unfinished ones")
    p.add_argument("--cpus", type=positive_int, help="runs at once on this machine (default: its cores)")
    p.add_argument("--max-runs", type=positive_int,
                   help="refuse a grid of more runs than this (default 1,000, at most 100,000: "
                   "memstream.sweep.spec.DEFAULT_MAX_RUNS and MAX_RUNS)")
    return {"sweep": cmd_sweep}


def cmd_sweep(args: argparse.Namespace) -> int:
    from memstream.sweep import DEFAULT_MAX_RUNS, load_spec, run_sweep

    max_runs = args.max_runs or DEFAULT_MAX_RUNS
    spec = load_spec(args.spec, max_runs=max_runs)
    out = Path(args.out)
    summary = run_sweep(spec, out, address=args.address, resume=args.resume, cpus=args.cpus, max_runs=max_runs)
    for cell in summary["cells"]:
        shown = "; ".join(f"{name} {key} {v['mean']:.3g} [{v['ci95'][0]:.3g}, {v['ci95'][1]:.3g}] (n={v['n']})"
                          for name, keys in cell["measures"].items() for key, v in keys.items()
                          if key in ("final_share", "density_end", "present"))
        print(f"{json.dumps(cell['params']) if cell['params'] else 'base'} ({len(cell['runs'])} runs): {shown}")
    for f in summary["failed"]:
        print(f"failed: {f['run']}: {f['error']}")
    print(f"wrote {out / 'results.json'} ({len(summary['runs'])} runs, {len(summary['failed'])} failed); "
          f"plot it with memstream plot sweep {out} -o sweep.png")
    return 1 if summary["failed"] else 0


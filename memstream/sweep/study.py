"""Running a sweep: each run a Ray task writing an ordinary run directory, measured, then aggregated.

Local by default (Ray starts on this machine with its cores); ``address`` joins a cluster. Faults use
what runs already have: a task that dies is retried and its run resumes from its last checkpoint
(exactly, so the results equal an uninterrupted sweep's); ``resume`` skips finished runs. Each task
pins its BLAS and ONNX threads to one, so runs sharing a machine do not fight over its cores.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from types import ModuleType
from typing import Any

from tqdm import tqdm

from memstream.errors import MemstreamError, import_extra
from memstream.files import JsonObject
from memstream.sim import RunDir, RunFiles, measures, resume_run, start_run
from memstream.sweep.results import Cell, FailedRun, Interval, Measured, RunResult, SweepSummary
from memstream.sweep.spec import DEFAULT_MAX_RUNS, SweepSpec, check_size, config_of, run_name

#: Each run alone on a core: numerical libraries and the MiniLM embedder on one thread.
THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MEMSTREAM_THREADS": "1",
              "MEMSTREAM_SHARED_CORES": "1"}
#: A task that dies (worker killed, node lost, an exception) is tried this many more times.
RETRIES = 3
#: Test hook: the worker making the run of this name is killed once, this many seconds into it
#: (``NAME@SECONDS``), as a lost machine would be; the retry must resume the run.
CRASH_ONCE = "MEMSTREAM_SWEEP_CRASH_ONCE"
#: Two-sided 95% critical values of Student's t by degrees of freedom (1-30; the normal's beyond).
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


#: Seconds between a worker's checks that the sweep's driver is still alive.
DRIVER_CHECK_S = 1.0
_WATCHED: set[tuple[str, int]] = set()


def run_one(out: str, spec_json: str, params: JsonObject, driver: tuple[str, int] | None = None) -> RunResult:
    """Make (or finish) one run of the sweep and measure it. Safe to call again: it resumes.

    ``driver`` (host, pid): the sweep's driver; a worker on the same host ends itself when it is
    gone (killed with -9, say), so no run goes on for a sweep nobody is waiting for."""
    _watch(driver)
    spec = SweepSpec.model_validate_json(spec_json)
    folder = Path(out)
    config, whispers = config_of(spec, params)
    if not _finished(folder):
        _crash_once(folder)
        if RunFiles(folder).is_run:
            result = resume_run(folder, progress=False)
        else:
            result = start_run(config, folder, progress=False, whispers=whispers)
        if result.stopped != "finished":
            raise MemstreamError(f"the run {folder.name} stopped ({result.stopped}): "
                                 f"{result.metrics.get('endpoint_failing') or 'see its metrics.json'}")
    with RunDir.open(folder) as run:
        metrics = run.records.metrics() or {}
    return {"run": folder.name, "params": params, "measures": measure(folder, spec),
            "metrics": {k: v for k, v in metrics.items()
                        if k in ("wall_s", "model_calls", "agent_steps", "memories", "calls_per_agent_step")},
            "cost": cost(folder)}


def cost(folder: Path) -> dict[str, float]:
    """What a run's memory cost, per agent-step and per agent, for a design to be weighed against what it did:
    model calls and tokens (prompt and completion, every purpose) per agent-step, the tokens of context a recall
    was given (a design's contexts; on the stream, not metered: left out) and the bytes its memory's store holds
    per agent (the stream file on the stream, the design store and its own files on a design; SQLite's pages in
    use, so a rewind's free pages are not counted)."""
    with RunDir.open(folder) as run:
        metrics = run.records.metrics() or {}
        steps = max(1, int(metrics.get("agent_steps", 0)))
        tokens = sum(u.get("prompt_tokens", 0) + u.get("completion_tokens", 0)
                     for u in (metrics.get("usage") or {}).values() if isinstance(u, dict))
        stores = run.memory_files()
        out = {"calls_per_agent_step": round(int(metrics.get("model_calls", 0)) / steps, 6),
               "tokens_per_agent_step": round(tokens / steps, 3),
               "store_bytes_per_agent": round(sum(_bytes_held(p) for p in stores) / max(1, len(run.agents)))}
        per_context = (metrics.get("memory") or {}).get("tokens_per_context")
        if isinstance(per_context, (int, float)):
            out["context_tokens_per_recall"] = float(per_context)
        return out


def _bytes_held(path: Path) -> int:
    """The bytes ``path`` holds: a SQLite file's pages in use (its write-ahead log folded in), another's size."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            (pages,), (free,), (size,) = (db.execute(f"PRAGMA {p}").fetchone()
                                          for p in ("page_count", "freelist_count", "page_size"))
            return (int(pages) - int(free)) * int(size)
    except sqlite3.DatabaseError:
        return path.stat().st_size


def _watch(driver: tuple[str, int] | None) -> None:
    """End this worker process when the driver on this host is gone (its checkpoints keep the run)."""
    if driver is None or driver[0] != socket.gethostname() or driver in _WATCHED:
        return
    _WATCHED.add(driver)  # a worker process runs many tasks: one watch is enough

    def watch() -> None:
        while True:
            time.sleep(DRIVER_CHECK_S)
            try:
                os.kill(driver[1], 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:  # alive, another user's
                pass

    threading.Thread(target=watch, daemon=True, name="memstream-driver-watch").start()


def _crash_once(folder: Path) -> None:
    name, _, seconds = os.environ.get(CRASH_ONCE, "").partition("@")
    marker = folder.parent / f".{folder.name}.crashed"
    if name == folder.name and not marker.exists():
        marker.touch()
        threading.Timer(float(seconds or 1), os._exit, (1,)).start()  # kill -9, as good as


def _finished(folder: Path) -> bool:
    if not RunFiles(folder).is_run:
        return False
    with RunDir.open(folder) as run:
        metrics = run.records.metrics()
        finished = isinstance(metrics, dict) and metrics.get("stopped") == "finished"
        return finished and run.checkpoints.latest() is not None


def measure(folder: Path, spec: SweepSpec) -> Measured:
    """The spec's measures of one run, as numbers: ``{"diffusion: FACT": {"final_share": ...}, ...}``."""
    out: Measured = {}
    with RunDir.open(folder) as run:
        for m in spec.measures:
            name, o = next(iter(m.items()))
            if name == "diffusion":
                spread = measures.diffusion(run, o["fact"])
                out[f"diffusion: {o['fact']}"] = {"final_share": spread["final_share"],
                                                  "final_heard": spread["final_heard"]}
            elif name == "network":
                known = measures.network(run)
                out["network"] = {"density_start": known["density_start"], "density_end": known["density_end"]}
            else:
                from memstream.timeutil import parse_time

                came = measures.attendance(run, o["place"], parse_time(o["from"]), parse_time(o["to"]),
                                           o.get("invited_fact"))
                out[f"attendance: {came['place']}"] = {
                    "present": len(came["present"]), "planned": len(came["planned"]),
                    "planned_and_came": came["planned_and_came"],
                    **({"attended_and_knew": came["attended_and_knew"]} if "knew" in came else {})}
    return out


def interval(values: list[float]) -> Interval:
    """Mean, sample standard deviation and a 95% t-interval of the mean (a point with one value)."""
    n = len(values)
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if n > 1 else 0.0
    half = (_T95[n - 2] if n - 1 <= len(_T95) else 1.96) * sd / n**0.5 if n > 1 else 0.0
    return {"mean": round(mean, 6), "std": round(sd, 6), "ci95": [round(mean - half, 6), round(mean + half, 6)],
            "n": n, "values": values}


def aggregate(spec: SweepSpec, runs: list[RunResult]) -> list[Cell]:
    """One object per grid cell (runs that differ only in the replicate option): params, runs, measures."""
    cells: dict[str, tuple[JsonObject, list[str], dict[str, dict[str, list[float]]], dict[str, list[float]]]] = {}
    for r in runs:
        params = {k: v for k, v in r["params"].items() if k != spec.replicate}
        _, names, values, costs = cells.setdefault(json.dumps(params, sort_keys=True), (params, [], {}, {}))
        names.append(r["run"])
        for name, numbers in r["measures"].items():
            for key, value in numbers.items():
                values.setdefault(name, {}).setdefault(key, []).append(value)
        for key, value in r.get("cost", {}).items():
            costs.setdefault(key, []).append(value)
    out: list[Cell] = []
    for params, names, values, costs in cells.values():
        cell: Cell = {"params": params, "runs": names,
                      "measures": {name: {k: interval(v) for k, v in keys.items()} for name, keys in values.items()}}
        if costs:
            cell["cost"] = {k: interval(v) for k, v in costs.items()}
        out.append(cell)
    return out


def _ray() -> ModuleType:
    """The ray module, imported when a sweep runs (an extra, so a clear line without it)."""
    return import_extra("ray", feature="memstream sweep", extra="ray")


@contextlib.contextmanager
def _terminated_as_interrupt() -> Iterator[None]:
    """SIGTERM ends the driver as Ctrl-C does (through ``finally``), so Ray is shut down either way."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_sweep(spec: SweepSpec, out: Path, *, address: str | None = None, resume: bool = False,
              progress: bool = True, cpus: int | None = None, max_runs: int = DEFAULT_MAX_RUNS) -> SweepSummary:
    """Every run of ``spec`` as a Ray task under ``out/runs``; ``out/results.json`` holds the cells.

    Ray is shut down however the driver ends (finished, an error, Ctrl-C, SIGTERM); workers of a
    driver killed with -9 end themselves (:func:`run_one`)."""
    check_size(spec, max_runs)
    ray = _ray()
    if out.exists() and not out.is_dir():
        raise MemstreamError(f"--out {out} is a file; name a folder")
    if (out / "spec.json").is_file() and not resume:
        raise MemstreamError(f"{out} holds a sweep already; add --resume to finish it, or choose another --out")
    if resume and (out / "spec.json").is_file() and json.loads((out / "spec.json").read_text()) != json.loads(
            spec.model_dump_json()):
        raise MemstreamError(f"{out} holds another sweep (its spec.json differs); choose another --out")
    cells = spec.cells() or [{}]
    names = [run_name(p) for p in cells]
    if len(set(names)) != len(names):
        raise MemstreamError("two runs of the sweep would share a folder; make their grid values differ")
    (out / "runs").mkdir(parents=True, exist_ok=True)
    (out / "spec.json").write_text(spec.model_dump_json(indent=2))
    address = address or os.environ.get("RAY_ADDRESS")
    with _terminated_as_interrupt():
        try:
            return _sweep(ray, spec, out, cells, address, progress, cpus)
        finally:
            ray.shutdown()


def _sweep(ray: Any, spec: SweepSpec, out: Path, cells: list[JsonObject], address: str | None, progress: bool,
           cpus: int | None) -> SweepSummary:
    ray.init(address=address, num_cpus=None if address else (cpus or os.cpu_count()), include_dashboard=False,
             ignore_reinit_error=True, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {**THREAD_ENV, **({CRASH_ONCE: os.environ[CRASH_ONCE]}
                                                        if CRASH_ONCE in os.environ else {})}})
    task = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=True)(run_one)
    spec_json = spec.model_dump_json()
    driver = (socket.gethostname(), os.getpid())
    pending = {task.remote(str(out / "runs" / run_name(p)), spec_json, p, driver): run_name(p) for p in cells}
    results: list[RunResult] = []
    failed: list[FailedRun] = []
    bar = tqdm(total=len(pending), unit="run", desc="sweep", disable=not progress)
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1, timeout=2.0)
        for ref in done:
            name = pending.pop(ref)
            try:
                results.append(ray.get(ref))
            except Exception as e:  # a run that failed for good, retries spent: reported, not fatal
                failed.append({"run": name, "error": str(e).strip().splitlines()[-1][:300]})
            bar.update(1)
        bar.set_postfix_str(f"{len(results)} done, {len(pending)} running or queued, {len(failed)} failed")
    bar.close()
    order = {run_name(p): i for i, p in enumerate(cells)}
    results.sort(key=lambda r: order[r["run"]])
    summary: SweepSummary = {"cells": aggregate(spec, results), "runs": results, "failed": failed}
    (out / "results.json").write_text(json.dumps(summary["cells"], indent=2))
    (out / "runs.json").write_text(json.dumps({"runs": results, "failed": failed}, indent=2))
    return summary

"""``memstream run``: a simulation written to a run directory, checkpointed every simulated hour.

A run directory holds ``config.json``, ``town.json`` (the town with its resolved
residents), ``streams.db`` (every agent's stream, owner-scoped), ``events.jsonl``,
``calls.db`` (the model-call cache), ``metrics.json`` and ``checkpoint/``. A run
stopped by ``--max-calls``, Ctrl-C or a kill resumes from its last checkpoint and
produces the same event log as an uninterrupted run: the checkpoint holds the
stream file, every agent's state and the event log's length, and the call cache
replays answers already given.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import sqlite3
import threading
import time
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from tqdm import tqdm

from memstream.errors import MemstreamError
from memstream.models import make_chat_model, make_embedder
from memstream.models.base import ChatModel, PurposeUsage
from memstream.models.cache import CachedChatModel, CachedEmbedder
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog, truncate
from memstream.sim.residents import populate
from memstream.sim.world import Town, default_town_path, load_town
from memstream.stream import MemoryStream, Weights
from memstream.timeutil import require_aware

FORMAT = "memstream-run"


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    town: str | None = None  # a town file; None for the default town
    agents: int | None = Field(default=None, gt=0)
    start: datetime
    hours: float = Field(gt=0, le=24 * 366 * 10, allow_inf_nan=False)  # up to ten simulated years
    step_seconds: int = Field(default=10, gt=0, le=3600)
    llm: str = "offline"
    embedder: str = "minilm"
    seed: int = 0
    max_calls: int | None = Field(default=None, gt=0)
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)  # seconds per model answer
    concurrency: int | None = Field(default=None, gt=0)  # model requests in flight
    weights: Weights = Field(default_factory=Weights)  # retrieval's weights for every agent (the paper's 1,1,1)

    @field_validator("start")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return require_aware(value, "--start")

    @model_validator(mode="after")
    def _ends_in_time(self) -> RunConfig:
        require_aware(self.start + timedelta(hours=self.hours), "the run's end (--start plus --hours)")
        return self


class RunResult(BaseModel):
    out: str
    stopped: str  # "finished", "max-calls", "interrupted" (Ctrl-C), "terminated" (SIGTERM)
    sim_time: datetime
    metrics: dict[str, Any]


def _resolve_town(config: RunConfig) -> Town:
    town = load_town(config.town or default_town_path())
    if not town.residents and not config.agents:
        raise MemstreamError(f"the town {config.town} has no residents; add some to it, or give --agents N "
                             "to generate N")
    return populate(town, config.agents or len(town.residents), config.seed)


def start_run(config: RunConfig, out: Path, *, progress: bool = True, chat: ChatModel | None = None) -> RunResult:
    """A new run in ``out``. ``chat`` replaces the model ``config.llm`` names (benchmarks wrap one)."""
    if out.exists() and not out.is_dir():
        raise MemstreamError(f"--out {out} is a file; name a new or empty folder")
    if out.exists() and any(out.iterdir()):
        raise MemstreamError(f"{out} is not empty; resume it with --resume {out} or choose another --out")
    town = _resolve_town(config)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise MemstreamError(f"cannot create the run folder {out} ({e.strerror}); choose another --out") from None
    (out / "config.json").write_text(config.model_dump_json(indent=2))
    (out / "town.json").write_text(town.model_dump_json(indent=2))
    return _run(out, config, town, None, progress, chat)


def read_run(out: Path) -> tuple[RunConfig, Town]:
    if not (out / "config.json").is_file():
        raise MemstreamError(f"{out} is not a run directory (no config.json); make one with memstream run")
    try:
        config = RunConfig.model_validate_json((out / "config.json").read_text())
        town = Town.model_validate_json((out / "town.json").read_text())
    except Exception:  # noqa: BLE001 - any damage to these files means the same thing
        raise MemstreamError(f"{out} is not a memstream run directory (unreadable config.json or town.json)") from None
    return config, town


def resume_run(out: Path, *, hours: float | None = None, timeout: float | None = None,
               concurrency: int | None = None, max_calls: int | None = None, progress: bool = True) -> RunResult:
    """Continue the run in ``out`` from its last checkpoint (for longer, with ``hours``; with another
    endpoint timeout or concurrency, which change how the model is asked, not what; with a new
    ``max_calls`` budget for this invocation)."""
    config, town = read_run(out)
    state, point = read_checkpoint(out)
    changes = {k: v for k, v in {"hours": hours, "timeout": timeout, "concurrency": concurrency,
                                 "max_calls": max_calls}.items() if v is not None}
    if changes:
        config = config.model_copy(update=changes)
        (out / "config.json").write_text(config.model_dump_json(indent=2))
    if point is not None:
        for suffix in ("", "-wal", "-shm"):
            (out / f"streams.db{suffix}").unlink(missing_ok=True)
        shutil.copyfile(point / "streams.db", out / "streams.db")
        truncate(out / "events.jsonl", state["events_lines"])
    else:  # stopped before the first checkpoint: start again from the beginning
        for name in ("streams.db", "streams.db-wal", "streams.db-shm", "events.jsonl"):
            (out / name).unlink(missing_ok=True)
    return _run(out, config, town, state, progress)


def read_checkpoint(out: Path) -> tuple[dict | None, Path | None]:
    """The state and folder of the run's latest checkpoint, (None, None) if it has none; a damaged
    checkpoint is one clear error, and nothing is changed."""
    latest = out / "checkpoint" / "LATEST"
    if not latest.is_file():
        return None, None
    name = latest.read_text(encoding="utf-8", errors="replace").strip()
    point = out / "checkpoint" / name
    fix = f"start it again with memstream run --out NEW (the run in {out} cannot be resumed)"
    if not re.fullmatch(r"t\d+", name) or not point.is_dir():
        raise MemstreamError(f"{latest} points to a checkpoint that is not there ({name[:40]!r}); {fix}")
    try:
        state = json.loads((point / "state.json").read_text(encoding="utf-8"))
        missing = {"time", "agents", "conversations", "objects", "versions", "agent_steps", "events_lines",
                   "usage"} - set(state)
        if missing:
            raise ValueError(f"no {', '.join(sorted(missing))}")
        with closing(sqlite3.connect(f"file:{point / 'streams.db'}?mode=ro", uri=True)) as db:
            if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise ValueError("its stream copy fails SQLite's check")
    except (OSError, ValueError, sqlite3.DatabaseError) as e:
        raise MemstreamError(f"checkpoint {point} is damaged ({str(e)[:80]}); {fix}") from None
    return state, point


class _Stop:
    """Why a run should stop at the end of the step under way: a budget, Ctrl-C or SIGTERM.

    Signals only set a flag, so the step finishes and a checkpoint is written where it stopped; a
    second Ctrl-C stops at once (the run then resumes from its last checkpoint).
    """

    def __init__(self) -> None:
        self.why = "finished"
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            for sig, why in ((signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")):
                self._previous[sig] = signal.signal(sig, lambda *_, why=why: self._signal(why))
        return self

    def _signal(self, why: str) -> None:
        if self.why in ("interrupted", "terminated"):
            raise KeyboardInterrupt
        self.why = why

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    @property
    def requested(self) -> bool:
        return self.why != "finished"


def _run(out: Path, config: RunConfig, town: Town, state: dict | None, progress: bool,
         model: ChatModel | None = None) -> RunResult:
    with _Stop() as stop:  # from the start: a signal while seeding stops at the first step
        return _simulate(out, config, town, state, progress, model, stop)


def _simulate(out: Path, config: RunConfig, town: Town, state: dict | None, progress: bool,
              model: ChatModel | None, stop: _Stop) -> RunResult:
    model = model or make_chat_model(config.llm, timeout=config.timeout, concurrency=config.concurrency)
    chat = CachedChatModel(model, out / "calls.db")
    embedder = CachedEmbedder(make_embedder(config.embedder))
    stream = MemoryStream(out / "streams.db", embedder, chat=chat, weights=config.weights)  # type: ignore[arg-type]
    events = EventLog(out / "events.jsonl")
    events.lines = state["events_lines"] if state else 0
    tz = config.start.tzinfo
    now = datetime.fromtimestamp(state["time"], tz) if state else config.start
    sim = Simulation(town, town.residents, stream, chat, events, start=now, step_s=config.step_seconds)
    wall_before = 0.0
    if not state:
        sim.seed_memories()
    else:
        sim.set_state(state)
        for purpose, u in state["usage"].items():
            chat.usage.by_purpose[purpose] = PurposeUsage(**u)
        chat.usage.rounds = state.get("rounds", 0)
        wall_before = state["wall_s"]
    end = config.start + timedelta(hours=config.hours)
    total = max(0, round((end - now).total_seconds() / config.step_seconds))
    bar = tqdm(total=total, unit="step", desc="simulating", disable=not progress, leave=False)
    started = time.perf_counter()
    steps_at_start, calls_at_start = sim.agent_steps, model_calls(chat)

    def on_tick(s: Simulation) -> bool:
        bar.update(1)
        wall = time.perf_counter() - started
        if bar.n % 30 == 0:
            bar.set_postfix_str(f"{s.now():%Y-%m-%d %H:%M} | {(s.agent_steps - steps_at_start) / max(wall, 1e-9):,.0f}"
                                f" agent-steps/s | {model_calls(chat)} calls")
        if config.max_calls and model_calls(chat) - calls_at_start >= config.max_calls and not stop.requested:
            stop.why = "max-calls"
        if stop.requested or int(s.last_tick) % 3600 == 0:
            checkpoint(out, s, chat, wall_before + wall)
        return stop.requested

    sim.on_tick = on_tick
    try:
        if total:
            sim.run(end)
    finally:
        bar.close()
        events.flush()
    wall = wall_before + time.perf_counter() - started
    if not stop.requested:
        checkpoint(out, sim, chat, wall)
    metrics = _metrics(config, sim, chat, embedder, wall, stop.why)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    events.close()
    stream.close()
    chat.close()
    return RunResult(out=str(out), stopped=stop.why, sim_time=sim.now(), metrics=metrics)


def model_calls(chat: CachedChatModel) -> int:
    """Calls that reached the model (cache hits replay an earlier answer and cost nothing)."""
    return sum(u.calls - u.cache_hits for u in chat.usage.by_purpose.values())


def checkpoint(out: Path, sim: Simulation, chat: CachedChatModel, wall_s: float) -> None:
    """Snapshot the stream file and every agent's state at the end of the step under way.

    The snapshot is written into a fresh folder that takes its name only when complete, and
    LATEST moves to it after that, so a kill at any point leaves the previous checkpoint whole.
    """
    sim.flush()
    sim.events.flush()
    root = out / "checkpoint"
    name = f"t{int(sim.last_tick)}"
    latest = root / "LATEST"
    if latest.is_file() and latest.read_text().strip() == name:
        return  # this step is checkpointed already
    partial = root / f"{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    state = {**sim.get_state(), "events_lines": sim.events.lines, "usage": chat.usage.as_dict(),
             "rounds": chat.usage.rounds, "wall_s": wall_s}
    sim.stream.backup(partial / "streams.db")
    (partial / "state.json").write_text(json.dumps(state))
    shutil.rmtree(root / name, ignore_errors=True)
    partial.rename(root / name)
    tmp = root / "LATEST.tmp"
    tmp.write_text(name)
    tmp.replace(latest)
    for old in root.iterdir():
        if old.is_dir() and old.name != name:
            shutil.rmtree(old, ignore_errors=True)


def _metrics(config: RunConfig, sim: Simulation, chat: CachedChatModel, embedder: CachedEmbedder, wall: float,
             stopped: str) -> dict[str, Any]:
    calls = model_calls(chat)
    steps = sim.agent_steps // max(len(sim.agents), 1)
    sim_hours = (sim.last_tick - config.start.timestamp()) / 3600
    return {
        "stopped": stopped, "agents": len(sim.agents), "sim_start": config.start.isoformat(),
        "sim_time": sim.now().isoformat(), "sim_hours": round(sim_hours, 4), "wall_s": round(wall, 2),
        "agent_steps": sim.agent_steps, "agent_steps_per_s": round(sim.agent_steps / max(wall, 1e-9), 1),
        "model_calls": calls, "cache_hits": sum(u.cache_hits for u in chat.usage.by_purpose.values()),
        "calls_per_agent_step": round(calls / max(sim.agent_steps, 1), 5), "model_failures": sim.model_failures,
        "lost_by_purpose": {p: u.lost for p, u in sorted(chat.usage.by_purpose.items()) if u.lost},
        "retried": sum(u.retried for u in chat.usage.by_purpose.values()),
        "rounds": chat.usage.rounds, "rounds_per_step": round(chat.usage.rounds / max(steps, 1), 4),
        "structured_output": getattr(chat.inner, "structured_mode", "not sent (offline)"),
        "memories": sim.stream.count(), "embedding_cache_hits": embedder.hits, "embedded_texts": embedder.misses,
        "usage": chat.usage.as_dict(), "usage_by_stage": {k: vars(v) for k, v in chat.usage.by_stage().items()},
    }

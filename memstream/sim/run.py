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
import shutil
import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from tqdm import tqdm

from memstream.errors import MemstreamError
from memstream.models import make_chat_model, make_embedder
from memstream.models.base import ChatModel, PurposeUsage
from memstream.models.cache import CachedChatModel, CachedEmbedder
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog, truncate
from memstream.sim.residents import populate
from memstream.sim.world import Town, default_town_path, load_town
from memstream.stream import MemoryStream
from memstream.timeutil import require_aware

FORMAT = "memstream-run"


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    town: str | None = None  # a town file; None for the default town
    agents: int | None = Field(default=None, gt=0)
    start: datetime
    hours: float = Field(gt=0)
    step_seconds: int = Field(default=10, gt=0, le=3600)
    llm: str = "offline"
    embedder: str = "minilm"
    seed: int = 0
    max_calls: int | None = Field(default=None, gt=0)
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)  # seconds per model answer
    concurrency: int | None = Field(default=None, gt=0)  # model requests in flight

    @field_validator("start")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        return require_aware(value, "--start")


class RunResult(BaseModel):
    out: str
    stopped: str  # "finished", "max-calls"
    sim_time: datetime
    metrics: dict[str, Any]


def _resolve_town(config: RunConfig) -> Town:
    town = load_town(config.town or default_town_path())
    return populate(town, config.agents or len(town.residents), config.seed)


def start_run(config: RunConfig, out: Path, *, progress: bool = True, chat: ChatModel | None = None) -> RunResult:
    """A new run in ``out``. ``chat`` replaces the model ``config.llm`` names (benchmarks wrap one)."""
    if out.exists() and any(out.iterdir()):
        raise MemstreamError(f"{out} is not empty; resume it with --resume {out} or choose another --out")
    town = _resolve_town(config)
    out.mkdir(parents=True, exist_ok=True)
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
               concurrency: int | None = None, progress: bool = True) -> RunResult:
    """Continue the run in ``out`` from its last checkpoint (for longer, with ``hours``; with another
    endpoint timeout or concurrency, which change how the model is asked, not what)."""
    config, town = read_run(out)
    changes = {k: v for k, v in {"hours": hours, "timeout": timeout, "concurrency": concurrency}.items()
               if v is not None}
    if changes:
        config = config.model_copy(update=changes)
        (out / "config.json").write_text(config.model_dump_json(indent=2))
    latest = out / "checkpoint" / "LATEST"
    state = None
    if latest.is_file():
        point = out / "checkpoint" / latest.read_text().strip()
        state = json.loads((point / "state.json").read_text())
        for suffix in ("", "-wal", "-shm"):
            (out / f"streams.db{suffix}").unlink(missing_ok=True)
        shutil.copyfile(point / "streams.db", out / "streams.db")
        truncate(out / "events.jsonl", state["events_lines"])
    else:  # stopped before the first checkpoint: start again from the beginning
        for name in ("streams.db", "streams.db-wal", "streams.db-shm", "events.jsonl"):
            (out / name).unlink(missing_ok=True)
    return _run(out, config, town, state, progress)


def _run(out: Path, config: RunConfig, town: Town, state: dict | None, progress: bool,
         model: ChatModel | None = None) -> RunResult:
    model = model or make_chat_model(config.llm, timeout=config.timeout, concurrency=config.concurrency)
    chat = CachedChatModel(model, out / "calls.db")
    embedder = CachedEmbedder(make_embedder(config.embedder))
    stream = MemoryStream(out / "streams.db", embedder, chat=chat)  # type: ignore[arg-type]
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
    stopped = {"why": "finished"}
    steps_at_start = sim.agent_steps

    def on_tick(s: Simulation) -> bool:
        bar.update(1)
        wall = time.perf_counter() - started
        if bar.n % 30 == 0:
            bar.set_postfix_str(f"{s.now():%Y-%m-%d %H:%M} | {(s.agent_steps - steps_at_start) / max(wall, 1e-9):,.0f}"
                                f" agent-steps/s | {model_calls(chat)} calls")
        if int(s.last_tick) % 3600 == 0:
            checkpoint(out, s, chat, wall_before + wall)
        if config.max_calls and model_calls(chat) >= config.max_calls:
            stopped["why"] = "max-calls"
            return True
        return False

    sim.on_tick = on_tick
    try:
        if total:
            sim.run(end)
    finally:
        bar.close()
        events.flush()
    wall = wall_before + time.perf_counter() - started
    if stopped["why"] == "finished":
        checkpoint(out, sim, chat, wall)
    metrics = _metrics(config, sim, chat, embedder, wall, stopped["why"])
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    events.close()
    stream.close()
    chat.close()
    return RunResult(out=str(out), stopped=stopped["why"], sim_time=sim.now(), metrics=metrics)


def model_calls(chat: CachedChatModel) -> int:
    """Calls that reached the model (cache hits replay an earlier answer and cost nothing)."""
    return sum(u.calls - u.cache_hits for u in chat.usage.by_purpose.values())


def checkpoint(out: Path, sim: Simulation, chat: CachedChatModel, wall_s: float) -> None:
    """Snapshot the stream file and every agent's state; LATEST moves only once both are complete."""
    sim._flush()
    sim.events.flush()
    root = out / "checkpoint"
    name = f"t{int(sim.last_tick)}"
    point = root / name
    point.mkdir(parents=True, exist_ok=True)
    state = {**sim.get_state(), "events_lines": sim.events.lines, "usage": chat.usage.as_dict(),
             "rounds": chat.usage.rounds, "wall_s": wall_s}
    with sqlite3.connect(point / "streams.db") as copy:
        sim.stream.store.db.backup(copy)
    copy.close()
    (point / "state.json").write_text(json.dumps(state))
    tmp = root / "LATEST.tmp"
    tmp.write_text(name)
    tmp.replace(root / "LATEST")
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
        "memories": sim.stream.count(), "embedding_cache_hits": embedder.hits, "embedded_texts": embedder.misses,
        "usage": chat.usage.as_dict(), "usage_by_stage": {k: vars(v) for k, v in chat.usage.by_stage().items()},
    }

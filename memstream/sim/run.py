"""``memstream run``: a simulation written to a run directory, checkpointed every simulated hour.

A run directory holds ``config.json``, ``town.json`` (the town with its resolved
residents), ``streams.db`` (every agent's stream, owner-scoped), ``events.jsonl``,
``calls.db`` (the model-call cache), ``whispers.json`` (memories an experimenter
puts in agents' minds, given at their time), ``metrics.json`` and ``checkpoint/``.
A run stopped by ``--max-calls``, Ctrl-C or a kill resumes from its last checkpoint
and produces the same event log as an uninterrupted run: the checkpoint holds the
stream file, every agent's state and the event log's length, and the call cache
replays answers already given. Besides the latest, the checkpoint every
``keep_every`` simulated hours from the start is kept: a run can be forked there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from tqdm import tqdm

from memstream.errors import MemstreamError
from memstream.files import Number, WholeNumber, problem
from memstream.models import CachedChatModel, CachedEmbedder, ChatModel, PurposeUsage, make_chat_model, make_embedder
from memstream.sim.engine import ABLATIONS, Simulation
from memstream.sim.events import EventLog, truncate
from memstream.sim.residents import populate
from memstream.sim.scenario import Scenario
from memstream.sim.whisper import Whisper, add_whisper, read_whispers, write_whispers
from memstream.sim.world import Town, default_town_path, load_town
from memstream.stream import MemoryStream, Weights
from memstream.timeutil import require_aware

FORMAT = "memstream-run"
#: Where a run starts and for how long, when nothing says otherwise: the morning the paper's agents woke to.
DEFAULT_START = datetime.fromisoformat("2023-02-13T06:00:00-08:00")
DEFAULT_HOURS = 3.0


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    town: str | None = None  # a town file; None for the default town
    agents: WholeNumber | None = Field(default=None, gt=0)
    start: datetime
    hours: Number = Field(gt=0, le=24 * 366 * 10, allow_inf_nan=False)  # up to ten simulated years
    step_seconds: WholeNumber = Field(default=10, gt=0, le=3600)
    llm: str = "offline"
    embedder: str = "minilm"
    seed: WholeNumber = 0
    max_calls: WholeNumber | None = Field(default=None, gt=0)
    timeout: Number | None = Field(default=None, gt=0, allow_inf_nan=False)  # seconds per model answer
    concurrency: WholeNumber | None = Field(default=None, gt=0)  # model requests in flight
    weights: Weights = Field(default_factory=Weights)  # retrieval's weights for every agent (the paper's 1,1,1)
    ablate: list[str] = Field(default_factory=list)  # modules the agents go without (engine.ABLATIONS)
    scenario: str | None = None  # the scenario the run was made from, if any
    keep_every: WholeNumber = Field(default=12, ge=1, le=24 * 366)  # whole simulated hours between kept checkpoints
    forked_from: str | None = None  # RUN@TIME this run was forked from

    @field_validator("ablate")
    @classmethod
    def _ablations(cls, value: list[str]) -> list[str]:
        unknown = [a for a in value if a not in ABLATIONS]
        if unknown:
            raise ValueError(f"unknown ablation {unknown[0]!r}; choose from {', '.join(ABLATIONS)}")
        return sorted(set(value))

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
    stopped: str  # "finished", "max-calls", "interrupted" (Ctrl-C), "terminated" (SIGTERM), "endpoint-failing"
    sim_time: datetime
    metrics: dict[str, Any]


def _resolve_town(config: RunConfig) -> Town:
    town = load_town(config.town or default_town_path())
    if not town.residents and not config.agents:
        raise MemstreamError(f"the town {config.town} has no residents; add some to it, or give --agents N "
                             "to generate N")
    _check_memory(config.agents or len(town.residents))
    return populate(town, config.agents or len(town.residents), config.seed)


#: Peak resident memory per agent over the first simulated hour, and for the process itself
#: (``benchmarks/simulation.py``: 10,000 agents peaked near 1 GB); a run grows from there.
MB_PER_AGENT, MB_BASE = 0.1, 300


def _check_memory(agents: int) -> None:
    """Refuse a town that cannot fit in this machine's memory, before building it."""
    try:
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows): let the run find out
        return
    need_mb = MB_BASE + agents * MB_PER_AGENT
    if need_mb > total_mb:
        raise MemstreamError(f"--agents {agents:,} needs about {need_mb / 1024:,.0f} GB of memory for a simulated "
                             f"hour and this machine has {total_mb / 1024:,.0f} GB; give fewer agents "
                             f"(up to about {int((total_mb - MB_BASE) / MB_PER_AGENT):,})")


def _new_folder(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise MemstreamError(f"--out {out} is a file; name a new or empty folder")
    if out.exists() and any(out.iterdir()):
        raise MemstreamError(f"{out} is not empty; resume it with --resume {out} or choose another --out")


def _make_folder(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise MemstreamError(f"cannot create the run folder {out} ({e.strerror}); choose another --out") from None


def start_run(config: RunConfig, out: Path, *, progress: bool = True, chat: ChatModel | None = None,
              whispers: list[Whisper] = ()) -> RunResult:
    """A new run in ``out``. ``chat`` replaces the model ``config.llm`` names (benchmarks wrap one)."""
    _new_folder(out)
    town = _resolve_town(config)
    names = {r.name for r in town.residents}
    for w in whispers:
        if w.agent not in names:
            raise MemstreamError(f"a whisper is for {w.agent!r}, who is not one of the run's agents")
    _make_folder(out)
    (out / "config.json").write_text(config.model_dump_json(indent=2))
    (out / "town.json").write_text(town.model_dump_json(indent=2))
    write_whispers(out, list(whispers))
    return _run(out, config, town, None, progress, chat)


def scenario_run(scenario: Scenario, out: Path, *, progress: bool = True, **changes: Any) -> RunResult:
    """A new run of ``scenario`` (``changes``: other settings of :class:`RunConfig`, such as ``hours``)."""
    config = RunConfig(**{"town": scenario.town, "agents": scenario.agents, "start": scenario.start,
                          "hours": scenario.hours, "seed": scenario.seed, "scenario": scenario.name, **changes})
    whispers = [Whisper(id=i, agent=w.agent, text=w.text, at=w.at or scenario.start)
                for i, w in enumerate(scenario.whispers, 1)]
    return start_run(config, out, progress=progress, whispers=whispers)


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


def checkpoint_times(out: Path, config: RunConfig) -> list[datetime]:
    """The simulated times a run has whole checkpoints for (its fork points), oldest first."""
    root = out / "checkpoint"
    if not root.is_dir():
        return []
    names = [p.name for p in root.iterdir() if p.is_dir() and re.fullmatch(r"t\d+", p.name)
             and (p / "state.json").is_file()]
    return sorted(datetime.fromtimestamp(int(n[1:]), config.start.tzinfo) for n in names)


def current_time(out: Path, config: RunConfig) -> datetime:
    """Where the run stands: its latest checkpoint's time, or its start if it has none."""
    state, _ = read_checkpoint(out)
    return datetime.fromtimestamp(state["time"], config.start.tzinfo) if state else config.start


#: Settings a fork may change; the others (town, agents, start, seed, step, embedder) make it another run.
FORK_CHANGES = ("hours", "weights", "llm", "ablate", "timeout", "concurrency", "max_calls", "keep_every")


def fork_run(source: Path, out: Path, *, at: datetime | None = None, progress: bool = True,
             **changes: Any) -> RunResult:
    """A new run in ``out`` that starts from ``source``'s checkpoint at ``at`` (default: its latest),
    with ``changes`` to its settings; ``hours`` counts from the fork point (default: to the source's
    end). The source is left untouched; the call cache comes along, so the shared past costs nothing.
    """
    config, town = read_run(source)
    unknown = set(changes) - set(FORK_CHANGES)
    if unknown:
        raise MemstreamError(f"a fork cannot change {', '.join(sorted(unknown))}; start a new run instead")
    times = checkpoint_times(source, config)
    state, point = read_checkpoint(source)
    if at is not None:
        if at not in times:
            kept = ", ".join(t.isoformat() for t in times) or "none"
            raise MemstreamError(f"{source} has no checkpoint at {at.isoformat()} to fork from; its fork points: "
                                 f"{kept}")
        point = source / "checkpoint" / f"t{int(at.timestamp())}"
        state = json.loads((point / "state.json").read_text(encoding="utf-8"))
    if state is None or point is None:
        raise MemstreamError(f"{source} has no checkpoint to fork from yet; run it for a simulated hour first")
    _new_folder(out)
    fork_time = datetime.fromtimestamp(state["time"], config.start.tzinfo)
    hours = changes.pop("hours", None)
    total = config.hours if hours is None else (fork_time - config.start).total_seconds() / 3600 + hours
    try:
        forked = RunConfig.model_validate({**config.model_dump(), **changes, "hours": total,
                                           "forked_from": f"{source}@{fork_time.isoformat()}"})
    except ValidationError as e:
        raise MemstreamError(f"bad fork setting: {problem(e)[:150]}") from None
    _make_folder(out)
    (out / "config.json").write_text(forked.model_dump_json(indent=2))
    (out / "town.json").write_text(town.model_dump_json(indent=2))
    write_whispers(out, read_whispers(source))
    for name in ("calls.db", "events.jsonl"):
        if (source / name).is_file():
            shutil.copyfile(source / name, out / name)
    shutil.copytree(point, out / "checkpoint" / point.name)
    (out / "checkpoint" / "LATEST").write_text(point.name)
    return resume_run(out, progress=progress)


def whisper(out: Path, agent: str, text: str, at: datetime | None = None) -> Whisper:
    """Put ``text`` in ``agent``'s mind at ``at`` (default: where the run stands), for the run to carry."""
    config, town = read_run(out)
    if agent not in {r.name for r in town.residents}:
        raise MemstreamError(f"unknown agent {agent!r} in {out}")
    now = current_time(out, config)
    at = at or now
    if at < now:
        raise MemstreamError(f"the run {out} stands at {now.isoformat()}; whisper at that time or later "
                             "(its past is fixed; fork it from an earlier checkpoint to change that)")
    try:
        return add_whisper(out, agent, text, at)
    except ValidationError as e:
        raise MemstreamError(f"bad whisper: {problem(e)}") from None


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
    stream = MemoryStream(out / "streams.db", embedder, weights=config.weights)  # type: ignore[arg-type]
    events = EventLog(out / "events.jsonl")
    events.lines = state["events_lines"] if state else 0
    tz = config.start.tzinfo
    now = datetime.fromtimestamp(state["time"], tz) if state else config.start
    sim = Simulation(town, town.residents, stream, chat, events, start=now, step_s=config.step_seconds,
                     ablate=frozenset(config.ablate), whispers=read_whispers(out))
    wall_before = 0.0
    if not state:
        sim.seed_memories()
        checkpoint(out, sim, chat, 0.0, keep=_kept(config))  # the start is a fork point too
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
        if chat.failing and not stop.requested:  # the breaker opened: checkpoint here, resume when it answers
            stop.why = "endpoint-failing"
        if stop.requested or int(s.last_tick) % 3600 == 0:
            checkpoint(out, s, chat, wall_before + wall, keep=_kept(config))
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
        checkpoint(out, sim, chat, wall, keep=_kept(config))
    metrics = _metrics(config, sim, chat, embedder, wall, stop.why)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    events.close()
    stream.close()
    chat.close()
    return RunResult(out=str(out), stopped=stop.why, sim_time=sim.now(), metrics=metrics)


def model_calls(chat: CachedChatModel) -> int:
    """Calls that reached the model (cache hits replay an earlier answer and cost nothing)."""
    return sum(u.calls - u.cache_hits for u in chat.usage.by_purpose.values())


def _kept(config: RunConfig) -> Callable[[str], bool]:
    """Which checkpoints stay besides the latest: those every ``keep_every`` hours from the start."""
    start, every = int(config.start.timestamp()), config.keep_every * 3600
    return lambda name: re.fullmatch(r"t\d+", name) is not None and (int(name[1:]) - start) % every == 0


def checkpoint(out: Path, sim: Simulation, chat: CachedChatModel, wall_s: float,
               keep: Callable[[str], bool] = lambda name: False) -> None:
    """Snapshot the stream file and every agent's state at the end of the step under way.

    The snapshot is written into a fresh folder that takes its name only when complete, and
    LATEST moves to it after that, so a kill at any point leaves the previous checkpoint whole.
    Older checkpoints are removed unless ``keep`` says otherwise (the fork points).
    """
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
        if old.is_dir() and old.name != name and not keep(old.name):
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
        **chat.usage.totals(), "endpoint_failing": chat.failing,
        "rounds": chat.usage.rounds, "rounds_per_step": round(chat.usage.rounds / max(steps, 1), 4),
        "structured_output": getattr(chat.inner, "structured_mode", "not sent (offline)"),
        "memories": sim.stream.count(), "embedding_cache_hits": embedder.hits, "embedded_texts": embedder.misses,
        "usage": chat.usage.as_dict(), "usage_by_stage": {k: vars(v) for k, v in chat.usage.by_stage().items()},
    }

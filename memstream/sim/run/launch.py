"""``memstream run`` and its kin: a new run, a scenario's, a resumed one, a fork, a whisper to a run.

Each opens its run directory through :class:`memstream.sim.run.rundir.RunDir` (which spells its files
and holds the one-writer lock) and checks everything it was given before it writes anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memstream.errors import MemstreamError
from memstream.files import problem
from memstream.models import CachedEmbedder, ChatModel, make_chat_model, make_embedder
from memstream.sim.agents.whisper import Whisper
from memstream.sim.memory import STREAM_DESIGN, seed_design
from memstream.sim.run.checkpoints import Checkpoint
from memstream.sim.run.config import FORK_CHANGES, RunConfig, RunResult
from memstream.sim.run.layout import DESIGN_STORE, STREAM
from memstream.sim.run.population import resolve_town
from memstream.sim.run.rundir import RunDir, check_new
from memstream.sim.run.scenario import Scenario
from memstream.sim.run.simulate import simulate


def start_run(config: RunConfig, out: Path, *, progress: bool = True, chat: ChatModel | None = None,
              whispers: Sequence[Whisper] = ()) -> RunResult:
    """A new run in ``out``. ``chat`` replaces the model ``config.llm`` names (benchmarks wrap one)."""
    check_new(out)
    town = resolve_town(config)
    names = {r.name for r in town.residents}
    for w in whispers:
        if w.agent not in names:
            raise MemstreamError(f"a whisper is for {w.agent!r}, who is not one of the run's agents")
    with RunDir.create(out, config, town, list(whispers)) as run:
        return simulate(run, None, progress=progress, model=chat)


def scenario_run(scenario: Scenario, out: Path, *, progress: bool = True, **changes: Any) -> RunResult:
    """A new run of ``scenario`` (``changes``: other settings of :class:`RunConfig`, such as ``hours``)."""
    config = RunConfig(**{"town": scenario.town, "agents": scenario.agents, "start": scenario.start,
                          "hours": scenario.hours, "seed": scenario.seed, "scenario": scenario.name, **changes})
    whispers = [Whisper(id=i, agent=w.agent, text=w.text, at=w.at or scenario.start)
                for i, w in enumerate(scenario.whispers, 1)]
    return start_run(config, out, progress=progress, whispers=whispers)


def resume_run(out: Path, *, hours: float | None = None, timeout: float | None = None,
               concurrency: int | None = None, max_calls: int | None = None, progress: bool = True) -> RunResult:
    """Continue the run in ``out`` from its last checkpoint (for longer, with ``hours``; with another
    endpoint timeout or concurrency, which change how the model is asked, not what; with a new
    ``max_calls`` budget for this invocation)."""
    changes = {k: v for k, v in {"hours": hours, "timeout": timeout, "concurrency": concurrency,
                                 "max_calls": max_calls}.items() if v is not None}
    with RunDir.open_writable(out) as run:
        return _resume(run, changes, progress)


def _resume(run: RunDir, changes: dict[str, Any], progress: bool) -> RunResult:
    """Go on from the latest checkpoint of ``run`` (open writable), its settings changed by ``changes``,
    which are validated, and checked not to end the run before where it stands, before any is written."""
    point = run.checkpoints.latest()
    if changes:
        try:
            config = RunConfig.model_validate({**run.config.model_dump(), **changes})
        except ValidationError as e:
            raise MemstreamError(f"bad run setting: {problem(e)[:150]}") from None
        stands = point.time if point else run.config.start
        if config.end < stands:
            raise MemstreamError(f"--hours {config.hours:g} would end the run at {config.end.isoformat()}, before "
                                 f"where it stands ({stands.isoformat()}); give at least "
                                 f"{(stands - config.start).total_seconds() / 3600:g}, or fork it from an earlier "
                                 "checkpoint to make it shorter")
        run.replace_config(config)
    run.checkpoints.restore(point)
    return simulate(run, point, progress=progress)


def fork_run(source: Path, out: Path, *, at: datetime | None = None, progress: bool = True,
             **changes: Any) -> RunResult:
    """A new run in ``out`` that starts from ``source``'s checkpoint at ``at`` (default: its latest),
    with ``changes`` to its settings; ``hours`` counts from the fork point (default: to the source's
    end). The source is left untouched; the call cache comes along, so the shared past costs nothing.
    """
    src = RunDir.open(source)
    unknown = set(changes) - set(FORK_CHANGES)
    if unknown:
        raise MemstreamError(f"a fork cannot change {', '.join(sorted(unknown))}; start a new run instead")
    point = src.checkpoints.at(at) if at is not None else src.checkpoints.latest()
    if point is None:
        raise MemstreamError(f"{source} has no checkpoint to fork from yet; run it for a simulated hour first")
    check_new(out)
    config = src.config
    if "design" in changes:  # settings are a design's own: another design starts from its defaults
        changes.setdefault("design_config", {})
    hours = changes.pop("hours", None)
    total = config.hours if hours is None else (point.time - config.start).total_seconds() / 3600 + hours
    try:
        forked = RunConfig.model_validate({**config.model_dump(), **changes, "hours": total,
                                           "forked_from": f"{source}@{point.time.isoformat()}"})
    except ValidationError as e:
        raise MemstreamError(f"bad fork setting: {problem(e)[:150]}") from None
    other_memory = (forked.design, forked.design_config) != (config.design, config.design_config)
    prepare = partial(_another_memory, point=point) if other_memory else None
    with RunDir.create_fork(out, src, point, forked, prepare) as run:
        return _resume(run, {}, progress)


def _another_memory(run: RunDir, folder: Path, *, point: Checkpoint) -> None:
    """The fork's checkpoint ``folder`` given a design store of the fork's design (none for the stream), built
    from every agent's memories at the fork point: the same morning, another memory. Its model calls (a
    summary, facts extracted) go through the fork's call cache."""
    for old in folder.glob(f"{DESIGN_STORE}*"):
        old.unlink()
    config = run.config
    if config.design == STREAM_DESIGN:
        return
    ledger = folder / STREAM if point.copied else run.files.stream
    through = int(point.state["stream"]["memories_through"]) if not point.copied else 1 << 62
    chat = run.call_cache(make_chat_model(config.llm, timeout=config.timeout, concurrency=config.concurrency,
                                          seed=config.seed))
    try:
        seed_design(ledger, through, config.design, folder / DESIGN_STORE, config.design_config, chat,
                    CachedEmbedder(make_embedder(config.embedder)))
    finally:
        chat.close()


def whisper(out: Path, agent: str, text: str, at: datetime | None = None) -> tuple[Whisper, int | None]:
    """Put ``text`` in ``agent``'s mind at ``at`` (default: where the run stands), for the run to carry;
    with the pid of the running run that will hear it, if one is running."""
    return RunDir.open(out).mailbox.add(agent, text, at)

"""Driving a simulation in a run directory: its models, the clock, checkpoints, whispers, progress, metrics.

The run directory is open writable (its writer's lock held). Between steps the driver checkpoints
every simulated hour and wherever the run stops (a budget of model calls, Ctrl-C, SIGTERM), and
picks up the whispers sent to the running run, so each is heard at its time. A run started from
a checkpoint goes on exactly as if it had never stopped: the checkpoint holds every agent's
state and the event log's length, and the call cache replays answers already given.
"""

from __future__ import annotations

import time
from datetime import timedelta

from tqdm import tqdm

from memstream.errors import CallInterrupted
from memstream.models import CachedChatModel, CachedEmbedder, ChatModel, PurposeUsage, make_chat_model, make_embedder
from memstream.sim.engine import Simulation
from memstream.sim.memory import DesignMemory, bedtime_in
from memstream.sim.run.checkpoints import Checkpoint
from memstream.sim.run.config import GATE_OFF, GATE_OFFLINE, RunConfig, RunResult
from memstream.sim.run.metrics import RunMetrics, model_calls, run_metrics
from memstream.sim.run.rundir import RunDir
from memstream.sim.run.stop import Stop
from memstream.trust import Checker, judge_name


def simulate(run: RunDir, point: Checkpoint | None, *, progress: bool = True,
             model: ChatModel | None = None) -> RunResult:
    """Run ``run`` from ``point`` (from its start if None) to its end. ``model`` replaces the one its
    settings name (benchmarks wrap one)."""
    with Stop() as stop:  # from the start: a signal while seeding stops at the first step
        return _simulate(run, point, progress, model, stop)


def _simulate(run: RunDir, point: Checkpoint | None, progress: bool, model: ChatModel | None,
              stop: Stop) -> RunResult:
    config, town = run.config, run.town
    state = point.state if point else None
    model = model or make_chat_model(config.llm, timeout=config.timeout, concurrency=config.concurrency,
                                     seed=config.seed)
    chat = run.call_cache(model)
    embedder = CachedEmbedder(make_embedder(config.embedder))
    stream = run.open_stream(embedder, config.weights, chat)
    events = run.records.event_log(state["events_lines"] if state else 0)
    now = point.time if point else config.start
    step = timedelta(seconds=config.step_seconds)
    sim = Simulation(town, town.residents, stream, chat, events, start=now, step_s=config.step_seconds,
                     ablate=frozenset(config.ablate), whispers=run.mailbox.new(now + step), seed=config.seed,
                     checker=run_checker(config, chat), talk_rules=config.talk_rules)
    wall_before, own_from = 0.0, 0
    if not state:
        try:
            sim.seed_memories()
        except CallInterrupted:  # stopped while the seed memories were rated: no checkpoint yet
            return _abandoned(run, sim, chat, embedder, 0.0, 0, stop)
        _checkpoint(run, sim, chat, 0.0, 0)  # the start is a fork point too
    else:
        sim.set_state(state)
        for purpose, u in state["usage"].items():
            chat.usage.by_purpose[purpose] = PurposeUsage(**u)
        chat.usage.rounds = state.get("rounds", 0)
        wall_before, own_from = state["wall_s"], state.get("own_steps_from", 0)  # a fork's own clock (rundir)
    total = max(0, round((config.end - now).total_seconds() / config.step_seconds))
    bar = tqdm(total=total, unit="step", desc="simulating", disable=not progress, leave=False)
    started = time.perf_counter()
    steps_at_start, calls_at_start = sim.agent_steps, model_calls(chat)

    def on_tick(s: Simulation) -> bool:
        if isinstance(s.stream, DesignMemory):  # the step's entries, every agent's, written together: a run stopped
            s.stream.commit_design()            # here and resumed writes its design exactly as one that went on
            now = s.now()                       # and the design's upkeep for whoever went to bed in this step
            due: dict[str, bool] = {}
            for name in s.order:                # (each bedtime checked once a step: residents share a few)
                sleep = s.agents[name].resident.sleep
                if sleep not in due:
                    due[sleep] = bedtime_in(sleep, now, s.step_s)
                if due[sleep]:
                    s.stream.consolidate_design(name, now)
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
            _checkpoint(run, s, chat, wall_before + wall, own_from)
        if not stop.requested:
            s.add_whispers(run.mailbox.new(s.now() + step))
        return stop.requested

    sim.on_tick = on_tick
    try:
        if total:
            sim.run(config.end)
    except CallInterrupted:  # a signal with a model call in flight: the step is abandoned, not finished
        return _abandoned(run, sim, chat, embedder, wall_before + time.perf_counter() - started, own_from, stop)
    finally:
        bar.close()
        events.flush()
    wall = wall_before + time.perf_counter() - started
    if not stop.requested:
        _checkpoint(run, sim, chat, wall, own_from)
    return _finish(run, sim, chat, stop, run_metrics(config, sim, chat, embedder, wall, stop.why, own_from))


def _abandoned(run: RunDir, sim: Simulation, chat: CachedChatModel, embedder: CachedEmbedder, wall: float,
               own_from: int, stop: Stop) -> RunResult:
    """Stopped with a model call in flight: the step under way is abandoned (no checkpoint of half a
    step); the last checkpoint stands, and resuming from it replays the answers had from the call cache."""
    point = run.checkpoints.latest()
    metrics = run_metrics(run.config, sim, chat, embedder, wall, stop.why, own_from)
    metrics["stopped_mid_step"] = {"abandoned_at": sim.now().isoformat(),
                                   "resumes_from": (point.time if point else run.config.start).isoformat()}
    return _finish(run, sim, chat, stop, metrics)


def _finish(run: RunDir, sim: Simulation, chat: CachedChatModel, stop: Stop, metrics: RunMetrics) -> RunResult:
    # also where it stopped between checkpoints
    run.records.write_blocked([b.to_dict() for b in sim.checker.audit.blocked])
    run.records.write_metrics(metrics)
    sim.events.close()
    sim.stream.close()
    chat.close()
    return RunResult(out=str(run.path), stopped=stop.why, sim_time=sim.now(), metrics=dict(metrics))


def run_checker(config: RunConfig, chat: ChatModel) -> Checker:
    """The run's write gate and critic: its own model's, asked in the step's batches, the offline rules, or none."""
    if config.gate == GATE_OFF:
        return Checker.off()
    if config.gate == GATE_OFFLINE:
        return Checker.offline(critic=config.critic)
    return Checker(by=judge_name(chat), critic=config.critic)


def _checkpoint(run: RunDir, sim: Simulation, chat: CachedChatModel, wall_s: float, own_from: int) -> None:
    """The event log and the log of what was kept out written, then a checkpoint at the end of the step under
    way (the stream writes what it holds before its mark is taken). ``wall_s`` and ``own_from`` (the agent-steps a
    fork's source had taken) are this run directory's own: a fork counts its own time and steps."""
    sim.events.flush()
    if isinstance(sim.stream, DesignMemory):  # what is queued for the design goes in before its store is copied
        sim.stream.settle_design()            # (the seed memories; a step's are in at its end), its ids settled
    run.records.write_blocked([b.to_dict() for b in sim.checker.audit.blocked])
    run.checkpoints.write(sim.last_tick, lambda: {**sim.get_state(), "events_lines": sim.events.lines,
                                                 "usage": chat.usage.as_dict(), "rounds": chat.usage.rounds,
                                                 "wall_s": wall_s, "own_steps_from": own_from,
                                                 "stream": sim.stream.mark().as_dict()})


"""What a run reports in its metrics: time, work, model calls and what they cost, lost answers."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memstream.models import CachedChatModel, CachedEmbedder, PrefixCacheShare, ProbeReport, Traffic
from memstream.sim.engine import Simulation
from memstream.sim.memory import DesignMemory
from memstream.sim.run.config import RunConfig
from memstream.trust import CRITIC_PURPOSE, GATE_PURPOSE, AuditCounts


class ReflectionMetrics(TypedDict):
    """This process's reflections (not a fork's source's), and the insights each check dropped."""

    insights: int
    dropped_by_check: dict[str, int]


class GateMetrics(AuditCounts):
    """The write gate: who judged, whether the critic ran, its counts and what its calls cost per agent-step."""

    by: str
    critic: bool
    calls_per_agent_step: float


class StoppedMidStep(TypedDict):
    """A run stopped with a model call in flight: when, and the checkpoint a resume starts from."""

    abandoned_at: str
    resumes_from: str


class PerAgentStep(TypedDict):
    """A purpose's cost per agent-step: model calls (not those the call cache answered) and tokens (in and out)."""

    calls: float
    tokens: float


class MemoryMetrics(TypedDict):
    """The agents' memory design, every purpose's cost per agent-step (what tells designs apart at what cost), and,
    on a design other than the stream, what this process asked of it: the contexts recalled and the tokens they
    held (per context on average), and its upkeep at bedtime."""

    design: str
    per_agent_step: dict[str, PerAgentStep]
    contexts: NotRequired[int]
    context_tokens: NotRequired[int]
    tokens_per_context: NotRequired[float]
    consolidations: NotRequired[int]
    consolidated: NotRequired[int]


class RunMetrics(Traffic):
    """A run's ``metrics.json``, written as is (a TypedDict, so the file keeps its exact keys and order).

    The traffic's three counts come from :class:`memstream.models.Traffic`, spread in where the report has them.
    """

    stopped: str
    agents: int
    sim_start: str
    sim_time: str
    sim_hours: float
    wall_s: float
    agent_steps: int
    agent_steps_per_s: float
    model_calls: int
    cache_hits: int
    calls_per_agent_step: float
    model_failures: int
    lost_by_purpose: dict[str, int]
    retried: int
    implausible_by_purpose: dict[str, int]
    truncated_by_purpose: dict[str, int]
    endpoint_failing: str | None
    rounds: int
    rounds_per_step: float
    structured_output: str
    structured_probe: ProbeReport | None
    prefix_cache_share: PrefixCacheShare
    reflection: ReflectionMetrics
    conversation_offers: dict[str, int | float | None]
    importance_histogram: dict[str, int]
    memories: int
    embedding_cache_hits: int
    embedded_texts: int
    gate: GateMetrics
    usage: dict[str, dict[str, int | float]]
    usage_by_stage: dict[str, dict[str, int | float]]
    memory: MemoryMetrics
    stopped_mid_step: NotRequired[StoppedMidStep]


def model_calls(chat: CachedChatModel) -> int:
    """Calls that reached the model (cache hits replay an earlier answer and cost nothing)."""
    return sum(u.calls - u.cache_hits for u in chat.usage.by_purpose.values())


def run_metrics(config: RunConfig, sim: Simulation, chat: CachedChatModel, embedder: CachedEmbedder, wall: float,
                stopped: str, own_steps_from: int = 0) -> RunMetrics:
    """``wall`` is this run directory's own time; ``own_steps_from`` the agent-steps it did not take itself (a
    fork's source's, before the fork point), left out of its rate."""
    calls = model_calls(chat)
    steps = sim.agent_steps // max(len(sim.agents), 1)
    sim_hours = (sim.last_tick - config.start.timestamp()) / 3600
    return {
        "stopped": stopped, "agents": len(sim.agents), "sim_start": config.start.isoformat(),
        "sim_time": sim.now().isoformat(), "sim_hours": round(sim_hours, 4), "wall_s": round(wall, 2),
        "agent_steps": sim.agent_steps,
        "agent_steps_per_s": round((sim.agent_steps - own_steps_from) / max(wall, 1e-9), 1),
        "model_calls": calls, "cache_hits": sum(u.cache_hits for u in chat.usage.by_purpose.values()),
        "calls_per_agent_step": round(calls / max(sim.agent_steps, 1), 5), "model_failures": sim.model_failures,
        "lost_by_purpose": {p: u.lost for p, u in sorted(chat.usage.by_purpose.items()) if u.lost},
        "retried": sum(u.retried for u in chat.usage.by_purpose.values()),
        "implausible_by_purpose": {p: u.implausible for p, u in sorted(chat.usage.by_purpose.items())
                                   if u.implausible},
        "truncated_by_purpose": {p: u.truncated for p, u in sorted(chat.usage.by_purpose.items()) if u.truncated},
        **chat.usage.totals(), "endpoint_failing": chat.failing,
        "rounds": chat.usage.rounds, "rounds_per_step": round(chat.usage.rounds / max(steps, 1), 4),
        "structured_output": getattr(chat.inner, "structured_mode", "not sent (offline)"),
        "structured_probe": probe.as_dict() if (probe := getattr(chat.inner, "structured_probe", None)) else None,
        "prefix_cache_share": chat.usage.prefix_cache_share(),
        "reflection": {"insights": sim.acting.insights_written,  # this process's reflections (not a fork's source)
                       "dropped_by_check": dict(sorted(sim.acting.insights_dropped.items()))},
        "conversation_offers": conversation_offers(sim),
        "importance_histogram": sim.poignancy.histogram(),  # the run's observations, by rating (sim.poignancy)
        "memories": sim.stream.count(), "embedding_cache_hits": embedder.hits, "embedded_texts": embedder.misses,
        "gate": {"by": sim.checker.name, "critic": sim.checker.critic and sim.checker.enabled,
                 **sim.checker.audit.to_dict()["counts"],
                 "calls_per_agent_step": round(_gate_calls(chat) / max(sim.agent_steps, 1), 5)},
        "usage": chat.usage.as_dict(), "usage_by_stage": {k: vars(v) for k, v in chat.usage.by_stage().items()},
        "memory": memory_metrics(config, sim, chat),
    }


def memory_metrics(config: RunConfig, sim: Simulation, chat: CachedChatModel) -> MemoryMetrics:
    """The design the agents remember with, and what this process recalled from it (a design other than the stream)."""
    steps = max(sim.agent_steps, 1)
    per_step: dict[str, PerAgentStep] = {
        p: {"calls": round((u.calls - u.cache_hits) / steps, 6),
            "tokens": round((u.prompt_tokens + u.completion_tokens) / steps, 3)}
        for p, u in sorted(chat.usage.by_purpose.items())}
    if not isinstance(sim.stream, DesignMemory):
        return {"design": config.design, "per_agent_step": per_step}
    m = sim.stream
    return {"design": config.design, "per_agent_step": per_step, "contexts": m.contexts,
            "context_tokens": m.context_tokens, "tokens_per_context": round(m.context_tokens / max(m.contexts, 1), 1),
            "consolidations": m.consolidations, "consolidated": m.consolidated}


def conversation_offers(sim: Simulation) -> dict[str, int | float | None]:
    """Offers of a conversation over the run, and what came of them: ``busy`` when the other got into a
    conversation before the answer came back; ``accept_rate`` the share accepted (None before any offer).
    Counted in the agents' state, so a resumed run goes on counting and a fork counts its source's too."""
    totals = {key: sum(getattr(a.social.offers, key) for a in sim.agents.values())
              for key in ("made", "accepted", "declined", "busy")}
    return {**totals, "accept_rate": round(totals["accepted"] / totals["made"], 4) if totals["made"] else None}


def _gate_calls(chat: CachedChatModel) -> int:
    """Calls the gate and the critic made that reached the model (their cost, apart from the run's)."""
    usage = [u for p, u in chat.usage.by_purpose.items() if p in (GATE_PURPOSE, CRITIC_PURPOSE)]
    return sum(u.calls - u.cache_hits for u in usage)

"""The simulation: a simpy clock, every agent's step driven by it, every model question batched per step.

Each step (10 simulated seconds by default) every agent wakes and goes
through its sub-steps (:meth:`Simulation._step`): reflect if its trigger fired,
at wake-up revise what it is currently about (after a day lived) and make its day
plan, take the action its plan gives for now (decomposing the hour block it
enters; a new action is a memory of its own, "Ann is serving coffee") and walk
toward the action's place, perceive what is
near (other agents and object states, at most ``ATTENTION`` new things a step; an
observation identical to the one it holds for the same thing is not written
again) and consider re-planning on a poignant one, and talk with a co-located
agent.

Every stage that needs the model (importance, plans, decompositions, reactions,
reflections, conversation turns and summaries) is a generator of requests
(:mod:`memstream.models.request`): an agent's step yields what its stage asks,
and the world process drives every agent's step side by side with the one runner
of stages (:func:`~memstream.models.request.run_direct` over
:func:`~memstream.models.request.concurrently`): all agents' questions of a round in
one batch (a back-end runs it concurrently), one retry batch and a per-request
fallback to the offline rules, the askers resumed in a fixed order. Stages just
write; the memory buffers the writes and writes them together when a read needs
them. Sub-steps that do not depend on each other run side by side, so their
questions share rounds.

The run is deterministic: agents act in name order, answers go to whoever
asked, and nothing reads the wall clock. Its seed decides every choice among
equals (whom an agent approaches among those here; the offline rules' and the
model's sampling): another seed, another run; the same seed, the same run.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import simpy

from memstream.models import ChatModel, OfflineChatModel, Stage, concurrently, run_direct
from memstream.planning import SLEEPING
from memstream.sim.agents.acting import Acting
from memstream.sim.agents.agent import Agent, Body
from memstream.sim.agents.movement import Movement
from memstream.sim.agents.objects import Objects
from memstream.sim.agents.perception import Perception
from memstream.sim.agents.poignancy import PoignancyTally
from memstream.sim.agents.spatial import Spatial
from memstream.sim.agents.whisper import Whisper
from memstream.sim.events import EventLog
from memstream.sim.talk.conversation import TALK_RULES, VISITING_RULES, Conversations
from memstream.sim.town.scene import Scene
from memstream.sim.town.world import Resident, Town
from memstream.stream import MemoryStream, importance_stage, new_memory
from memstream.timeutil import from_epoch, to_epoch
from memstream.trust import Audit, Checker

#: The cycle collector's thresholds while a simulation runs (Python's defaults: 700, 10, 10).
GC_THRESHOLDS = (50_000, 20, 100)
IDENTITY = "identity"  # the kind of the memories an agent starts with
#: Modules a run can go without, as in the paper's controlled evaluation: ``observation`` (nothing the
#: agent perceives, does or hears is written to its stream), ``reflection`` (it never reflects),
#: ``planning`` (it follows its routine: no day plan, decomposition, revision or re-planning); and ``spatial``
#: (it knows every place of the town from the start, its prompts list none: :mod:`memstream.sim.agents.spatial`).
ABLATIONS = ("observation", "reflection", "planning", "spatial")


@contextmanager
def _rare_full_collections() -> Iterator[None]:
    """Python's cycle collector, run less often while the clock runs (restored after).

    A step allocates a few objects per agent that live until the step ends, so with thousands
    of agents the default thresholds promote them and trigger full collections, each walking
    every object of the run: a tenth of a 4,000-agent hour. Cycles are still collected.
    """
    before = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


class Simulation:
    """Many agents in a town, built from components that each own one part of every agent's state:
    :class:`~memstream.sim.agents.movement.Movement` (its body), :class:`~memstream.sim.agents.perception.Perception`
    (its senses), :class:`~memstream.sim.agents.acting.Acting` (its mind: whispers, reflection, plans,
    actions, reactions), :class:`~memstream.sim.talk.conversation.Conversations` (its social side), and
    the world's :class:`~memstream.sim.agents.objects.Objects` and :class:`~memstream.sim.town.scene.Scene`.
    :meth:`_step` says in what order an agent's step uses them."""

    def __init__(self, town: Town, residents: list[Resident], stream: MemoryStream, chat: ChatModel,
                 events: EventLog, *, start: datetime, step_s: int = 10, ablate: frozenset[str] = frozenset(),
                 whispers: Sequence[Whisper] = (), seed: int = 0, checker: Checker | None = None,
                 talk_rules: int = TALK_RULES) -> None:
        self.town, self.stream, self.chat, self.events = town, stream, chat, events
        self.checker = checker or Checker.off()  # the write gate and critic in front of every stream
        self.step_s = step_s
        unknown = set(ablate) - set(ABLATIONS)
        if unknown:
            raise ValueError(f"unknown ablation {sorted(unknown)[0]!r}; choose from {', '.join(ABLATIONS)}")
        self.ablate = frozenset(ablate)
        self.tz = start.tzinfo
        first_building = min(b.name for a in town.areas for b in a.buildings)
        self.agents = {r.name: Agent(r, Body(r.home or first_building)) for r in residents}
        self.order = sorted(self.agents)
        self.scene = Scene()
        self.movement = Movement(town, self.agents, self.scene)
        self.objects = Objects(town, self.movement, self.scene, events)
        self.poignancy = PoignancyTally.from_stream(stream, self.order)  # the model's own scale (sim.poignancy)
        self.perception = Perception(self.agents, self.movement, self.objects, self.scene, stream,
                                     town.vision_radius, self.checker, self.poignancy)
        self.spatial = Spatial(town, self.agents, self.movement.map, self.perception.nearby, stream, self.ablate)
        self.talk = Conversations(self.agents, stream, events, self.movement.occupants, self.ablate, seed,
                                  self.spatial, self.checker, talk_rules)
        self.acting = Acting(stream, events, self.movement, self.scene, self.talk.of, self.ablate, whispers,
                             self.spatial, self.checker, self.poignancy,
                             self.talk.plan_visits if talk_rules >= VISITING_RULES else None)
        self.env = simpy.Environment(initial_time=to_epoch(start))
        self.agent_steps = 0
        self._fallback = OfflineChatModel(seed)
        self._started = False
        self.last_tick = self.env.now
        self.on_tick: Callable[[Simulation], bool] | None = None  # return True to stop

    @property
    def model_failures(self) -> int:
        """Answers lost so far (unusable twice or failed for good; the offline rules stood in)."""
        return self.chat.usage.lost

    def add_whispers(self, whispers: list[Whisper]) -> None:
        """Whispers to give when the clock reaches them (a running run hears new ones between steps)."""
        self.acting.add_whispers(whispers)

    # -- state ---------------------------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        return {"time": self.last_tick, "agents": [self.agents[n].get_state() for n in self.order],
                "conversations": self.talk.get_state(), **self.objects.state.get_state(),
                **self.scene.get_state(), "agent_steps": self.agent_steps, "trust": self.checker.audit.to_dict()}

    def set_state(self, state: dict[str, Any]) -> None:
        for s in state["agents"]:
            self.agents[s["name"]].set_state(s)
        self.talk.set_state(state["conversations"])
        self.objects.state.set_state(state)
        self.scene.set_state(state)
        self.agent_steps = state["agent_steps"]
        if "trust" in state:  # a checkpoint from before the gate has none
            self.checker.audit = Audit.from_dict(state["trust"])
        self.movement.index()
        self.spatial.reindex()
        self.scene.stir(*self.objects.things_in)

    def seed_memories(self) -> None:
        """Each agent starts knowing its identity, as in the paper: its situation and whom it knows; and the
        places it knows (home, workplace, its routine's)."""
        now = self.now()
        for name in self.order:
            self.spatial.start(self.agents[name], now)
        facts = [(name, text) for name in self.order for text in self._identity_facts(self.agents[name].resident)]
        ratings = run_direct(importance_stage([text for _, text in facts]), self.chat, fallback=self._fallback)
        for (name, text), importance in zip(facts, ratings, strict=True):
            self.stream.write(new_memory(owner=name, text=text, kind=IDENTITY, created_at=now, importance=importance))

    @staticmethod
    def _identity_facts(r: Resident) -> list[str]:
        return ([f"{r.name}'s current situation: {r.situation}"] if r.situation else []) + [
            f"{r.name} knows {other}: {how}" for other, how in sorted(r.relationships.items())]

    # -- the clock -------------------------------------------------------------------------------

    def now(self) -> datetime:
        """The simulated time of the step under way (or of the last step, after a run)."""
        return from_epoch(self.last_tick).astimezone(self.tz)

    def run(self, until: datetime) -> None:
        """Advance the clock to ``until``. A Simulation runs once; to go on, resume from a checkpoint."""
        if self._started:
            raise RuntimeError("this simulation has already run; resume its run directory instead")
        self._started = True
        self.env.process(self._world_process())
        with _rare_full_collections():
            self.env.run(until=to_epoch(until) + self.step_s / 2)

    def _world_process(self) -> Generator[simpy.Event, Any, None]:
        """Each step: every awake agent's sub-steps side by side (started and resumed in name order),
        their questions answered round by round by the one runner; then the objects, then the tick.

        The world drives the agents' steps itself, rather than each agent being a simpy process
        woken by an event: the clock's queue then holds one event a step, not one per agent (at
        10,000 agents its heap was a tenth of the run). Agents are resumed in name order whatever
        happened before, so a run resumed from a checkpoint takes the same steps.
        """
        while True:
            yield self.env.timeout(self.step_s)
            self.last_tick = self.env.now
            now = self.now()
            clock = f"{now:%H:%M}"
            steps = [self._step(self.agents[name], now, clock) for name in self.order
                     if not self._sound_asleep(self.agents[name], clock)]
            run_direct(concurrently(steps), self.chat, fallback=self._fallback)
            self.objects.update(now)
            self.agent_steps += len(self.agents)
            if self.on_tick and self.on_tick(self):
                raise simpy.core.StopSimulation(None)

    # -- one agent, one step ---------------------------------------------------------------------

    def _sound_asleep(self, a: Agent, clock: str) -> bool:
        """Whether the agent's step would change nothing, so it is skipped: asleep in its bed at home
        (it acts, perceives and talks not at all), with no whisper, reflection check or conversation
        pending. A third of the agents are, at any hour of a day."""
        r, mind = a.resident, a.mind  # the cheapest test first: most agents most of the day are not asleep
        return (mind.activity == SLEEPING == mind.block_activity and not r.wake <= clock < r.sleep
                and not a.body.route and a.body.location == (r.home or a.body.location)
                and not a.senses.perceived_since_check and a.name not in self.acting.whispers
                and self.talk.of(a.name) is None)

    def _step(self, a: Agent, now: datetime, clock: str) -> Stage[None]:
        """One agent's step: a short sequence of sub-steps, the independent ones side by side."""
        awake = a.resident.wake <= clock < a.resident.sleep  # clock: now as "HH:MM", made once a step
        if a.name in self.acting.whispers:
            yield from self.acting.hear_whispers(a, now)
        if a.senses.perceived_since_check and "reflection" not in self.ablate:  # only what is new can fire it
            yield from concurrently([self.acting.reflect_if_due(a, now), self._live(a, now, awake)])
        else:
            yield from self._live(a, now, awake)

    def _live(self, a: Agent, now: datetime, awake: bool) -> Stage[None]:
        if awake and (a.mind.plan is None or a.mind.plan.day.date() != now.date()):
            yield from self.acting.plan_the_day(a, now)
        yield from self.acting.act(a, now, awake)
        yield from concurrently([self._perceive_and_react(a, now, awake), self.talk.converse(a, now, awake)])

    def _perceive_and_react(self, a: Agent, now: datetime, awake: bool) -> Stage[None]:
        """What is new nearby, written as rated observations; a poignant one may change the plan."""
        if a.mind.activity == SLEEPING:
            return
        if "observation" in self.ablate:  # it looks, and keeps nothing
            self.perception.look(a)
            return
        top = yield from self.perception.perceive(a, now)
        if top is not None:
            yield from self.acting.consider(a, *top, now, awake)

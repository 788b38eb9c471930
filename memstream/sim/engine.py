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
asked, and nothing reads the wall clock.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import simpy

from memstream.models.base import ChatModel
from memstream.models.offline import OfflineChatModel
from memstream.models.request import Stage, concurrently, run_direct
from memstream.offline_text import doing
from memstream.planning import decompose_stage, plan_day_stage, react_stage, revise_stage, routine_plan
from memstream.reflection import maybe_reflect_stage
from memstream.sim.agent import SLEEPING, Agent
from memstream.sim.conversation import Conversations
from memstream.sim.events import EventLog
from memstream.sim.whisper import Whisper
from memstream.sim.world import Map, Resident, Town
from memstream.stream import OBSERVATION, THOUGHT, MemoryStream, importance_stage, new_memory
from memstream.timeutil import from_epoch, to_epoch

#: New things an agent takes in per step (the reference implementation's attention bandwidth).
ATTENTION = 3
#: Observations this poignant or more make the agent consider changing its plan.
REACT_IMPORTANCE = 7
REACT_COOLDOWN_S = 1800      # an agent re-plans at most this often (no storms of agents reacting to reactions)
SEEN_CHARS = 120             # what an agent notes of another's activity
#: The cycle collector's thresholds while a simulation runs (Python's defaults: 700, 10, 10).
GC_THRESHOLDS = (50_000, 20, 100)
IDENTITY = "identity"  # the kind of the memories an agent starts with
#: The importance of an agent's own action when no model rated it (asleep, no plan): the paper's anchor for
#: the mundane. A planned action shares the rating the model gave its block's decomposition.
IDLE_IMPORTANCE = 1
#: Modules a run can go without, as in the paper's controlled evaluation: ``observation`` (nothing the
#: agent perceives, does or hears is written to its stream), ``reflection`` (it never reflects),
#: ``planning`` (it follows its routine: no day plan, decomposition, revision or re-planning).
ABLATIONS = ("observation", "reflection", "planning")


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
    def __init__(self, town: Town, residents: list[Resident], stream: MemoryStream, chat: ChatModel,
                 events: EventLog, *, start: datetime, step_s: int = 10, ablate: frozenset[str] = frozenset(),
                 whispers: list[Whisper] = ()) -> None:
        self.town, self.map, self.stream, self.chat, self.events = town, Map(town), stream, chat, events
        self.step_s = step_s
        unknown = set(ablate) - set(ABLATIONS)
        if unknown:
            raise ValueError(f"unknown ablation {sorted(unknown)[0]!r}; choose from {', '.join(ABLATIONS)}")
        self.ablate = frozenset(ablate)
        self.whispers: dict[str, list[Whisper]] = defaultdict(list)
        for w in sorted(whispers, key=lambda w: (w.at, w.id)):
            self.whispers[w.agent].append(w)
        self.tz = start.tzinfo
        self.agents = {r.name: Agent(r, r.home or sorted(self.map.buildings)[0]) for r in residents}
        self.order = sorted(self.agents)
        self._at: dict[str, set[str]] = defaultdict(set)  # building -> agents there (arrived or leaving)
        self._index_locations()
        self.env = simpy.Environment(initial_time=to_epoch(start))
        self.talk = Conversations(self.agents, stream, events, self._occupants, self.ablate)
        self.objects: dict[str, str] = {}                  # "building/room/object" -> state
        self._things = [(b.name, f"{b.name}/{r.name}/{t.name}", t)  # every object, in the town's order
                        for a in town.areas for b in a.buildings for r in b.rooms for t in r.objects]
        self._things_at: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # building -> its objects
        for building, key, thing in sorted(self._things, key=lambda x: x[1]):
            self._things_at[building].append((key, key.split("/")[1], thing.name))
        self._things_in: dict[str, list[tuple[str, Any]]] = defaultdict(list)  # building -> (key, thing), in order
        for building, key, thing in self._things:
            self._things_in[building].append((key, thing))
        self._town_order = {name: i for i, name in enumerate(self.map.buildings)}
        self._stirred: set[str] = set(self._things_in)  # buildings whose objects may change state this step
        self.versions: dict[str, int] = defaultdict(int)   # building -> bumps on any visible change
        self.nearby = self.map.within(town.vision_radius)
        self.agent_steps = 0
        self._fallback = OfflineChatModel()
        self._started = False
        self.last_tick = self.env.now
        self.on_tick: Callable[[Simulation], bool] | None = None  # return True to stop

    @property
    def model_failures(self) -> int:
        """Answers lost so far (unusable twice or failed for good; the offline rules stood in)."""
        return self.chat.usage.lost

    # -- state ---------------------------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        return {"time": self.last_tick, "agents": [self.agents[n].get_state() for n in self.order],
                "conversations": self.talk.get_state(), "objects": self.objects, "versions": dict(self.versions),
                "agent_steps": self.agent_steps}

    def set_state(self, state: dict[str, Any]) -> None:
        for s in state["agents"]:
            self.agents[s["name"]].set_state(s)
        self.talk.set_state(state["conversations"])
        self.objects, self.versions = dict(state["objects"]), defaultdict(int, state["versions"])
        self.agent_steps = state["agent_steps"]
        self._index_locations()
        self._stirred = set(self._things_in)

    def _index_locations(self) -> None:
        self._at.clear()
        for name, a in self.agents.items():
            self._at[a.location].add(name)

    def seed_memories(self) -> None:
        """Each agent starts knowing its identity, as in the paper: its situation and whom it knows."""
        now = self.now()
        facts = [(name, text) for name in self.order for text in self._identity_facts(self.agents[name].resident)]
        ratings = run_direct(importance_stage([text for _, text in facts]), self.chat, fallback=self._fallback)
        for (name, text), importance in zip(facts, ratings, strict=True):
            self.write(name, text, IDENTITY, importance, now)

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
            self._update_objects()
            self.agent_steps += len(self.agents)
            if self.on_tick and self.on_tick(self):
                raise simpy.core.StopSimulation(None)

    def write(self, owner: str, text: str, kind: str, importance: int, at: datetime, cites: tuple[int, ...] = (),
              **metadata: Any) -> None:
        """Write a memory (the stream buffers it: a round's writes go to the file together)."""
        self.stream.write(new_memory(owner=owner, text=text, kind=kind, created_at=at, importance=importance,
                                     cites=cites, metadata=metadata))

    # -- one agent, one step ---------------------------------------------------------------------

    def _sound_asleep(self, a: Agent, clock: str) -> bool:
        """Whether the agent's step would change nothing, so it is skipped: asleep in its bed at home
        (it acts, perceives and talks not at all), with no whisper, reflection check or conversation
        pending. A third of the agents are, at any hour of a day."""
        r = a.resident  # the cheapest test first: most agents most of the day are not asleep
        return (a.activity == SLEEPING == a.block_activity and not r.wake <= clock < r.sleep and not a.route
                and a.location == (r.home or a.location) and not a.perceived_since_check
                and a.name not in self.whispers and self.talk.of(a.name) is None)

    def _step(self, a: Agent, now: datetime, clock: str) -> Stage[None]:
        """One agent's step: a short sequence of sub-steps, the independent ones side by side."""
        awake = a.resident.wake <= clock < a.resident.sleep  # clock: now as "HH:MM", made once a step
        if a.name in self.whispers:
            yield from self._hear_whispers(a, now)
        if a.perceived_since_check and "reflection" not in self.ablate:  # only what is new can fire the trigger
            yield from concurrently([self._reflect_if_due(a, now), self._live(a, now, awake)])
        else:
            yield from self._live(a, now, awake)

    def _live(self, a: Agent, now: datetime, awake: bool) -> Stage[None]:
        if awake and (a.plan is None or a.plan.day.date() != now.date()):
            yield from self._plan_the_day(a, now)
        yield from self._act(a, now, awake)
        yield from concurrently([self._perceive_and_react(a, now, awake), self._converse(a, now, awake)])

    def _hear_whispers(self, a: Agent, now: datetime) -> Stage[None]:
        """The agent's inner voice: the whispers due by now that it has not heard, as thoughts."""
        due = [w for w in self.whispers[a.name] if w.at <= now and w.id not in a.heard]
        if not due:
            return
        ratings = yield from importance_stage([w.text for w in due])
        for w, importance in zip(due, ratings, strict=True):
            self.write(a.name, w.text, THOUGHT, importance, now, whisper=w.id)
            a.heard.append(w.id)
        self.events.log(now, a.name, f"hears a whisper: {due[-1].text[:80]}", a.where)

    def _reflect_if_due(self, a: Agent, now: datetime) -> Stage[None]:
        """The reflection trigger reads the stream, which holds what the agent perceived up to its last step."""
        a.perceived_since_check = False
        result = yield from maybe_reflect_stage(self.stream, a.name, now)
        if result is not None:
            self.events.log(now, a.name, f"reflects: {len(result.insights)} insights", a.where)

    def _plan_the_day(self, a: Agent, now: datetime) -> Stage[None]:
        """After a day lived, revise what the agent is currently about; then plan the day from that."""
        if "planning" in self.ablate:
            a.plan = routine_plan(a.identity, now)
            return
        revision = None
        if a.plan is not None:  # a new day after one lived
            revision = yield from revise_stage(self.stream, a.identity, now)
            if revision:
                a.currently = revision.currently
                self.events.log(now, a.name, f"is now: {revision.currently}", a.where)
        a.plan = yield from plan_day_stage(self.stream, a.identity, now,
                                           revision=revision.memory_id if revision else None)
        self.events.log(now, a.name, "plans the day: " + "; ".join(s.activity for s in a.plan.strokes), a.where)

    def _act(self, a: Agent, now: datetime, awake: bool) -> Stage[None]:
        """Take the action the plan gives for now (decomposing a block on entry), one step along the way."""
        r = a.identity
        was = (a.location, not a.route, a.activity)  # what the objects where it stands depend on
        conversation = self.talk.of(a.name)
        importance = IDLE_IMPORTANCE
        if conversation:
            activity, block_activity, target = f"talking with {conversation.other(a.name)}", "talking", a.location
        elif not awake or a.plan is None:
            activity = block_activity = SLEEPING
            target = r.home or a.location
        else:
            block = a.plan.block_at(now)
            if not block.actions and block.activity != SLEEPING:
                yield from decompose_stage(self.stream, r, a.plan, now)
            action = a.plan.action_at(now) or block
            activity, block_activity = action.activity, block.activity
            target = self.map.resolve(action.location, r.home or a.location)
            importance = block.importance or IDLE_IMPORTANCE
        moved = self._walk(a, target)
        if activity != a.activity or moved:
            self.events.log(now, a.name, activity, a.where)
        if activity != a.activity and not conversation and "observation" not in self.ablate:  # its own new action
            self.write(a.name, f"{doing(a.name, activity)} at {target}", OBSERVATION, importance, now,
                       cites=(a.plan.memory_id,) if a.plan and a.plan.memory_id and activity != SLEEPING else (),
                       own=True)
            a.perceived_since_check = True
        if block_activity != a.block_activity or moved:
            self.versions[a.location] += 1
        a.activity, a.block_activity = activity, block_activity
        if (a.location, not a.route, a.activity) != was:
            self._stirred.update((was[0], a.location))

    def _perceive_and_react(self, a: Agent, now: datetime, awake: bool) -> Stage[None]:
        """Write what is new nearby, rated by the model; a poignant observation may change the plan."""
        new = self._perceive(a) if a.activity != SLEEPING else []
        if not new or "observation" in self.ablate:
            return
        ratings = yield from importance_stage([text for _, text in new])
        for (key, text), importance in zip(new, ratings, strict=True):
            a.seen[key] = text
            self.write(a.name, text, OBSERVATION, importance, now, about=key)
        a.perceived_since_check = True
        top_importance, top_text = max(zip(ratings, (t for _, t in new), strict=True))
        if (top_importance >= REACT_IMPORTANCE and awake and a.plan is not None and not self.talk.of(a.name)
                and "planning" not in self.ablate
                and now.timestamp() >= a.next_react_s):
            a.next_react_s = now.timestamp() + REACT_COOLDOWN_S
            decision = yield from react_stage(self.stream, a.plan, a.identity, top_text, now)
            if decision.react:
                a.plan = decision.plan
                self.events.log(now, a.name, f"reacts to '{top_text}': {decision.reaction}", a.where)

    def _converse(self, a: Agent, now: datetime, awake: bool) -> Stage[None]:
        conversation = self.talk.of(a.name)
        if conversation and not conversation.ended:
            if conversation.next_speaker == a.name:
                yield from self.talk.speak(a, conversation, now)
        elif awake and not conversation and not a.route and now.timestamp() >= a.next_chat_s:
            yield from self.talk.maybe_start(a, now)

    def _walk(self, a: Agent, target: str) -> bool:
        """One step along the route to ``target``; True if the agent reached a new building."""
        if a.location == target and not a.route:
            return False
        if not a.route or a.route[-1] != target:
            a.route, a.progress = self.map.route(a.location, target)[1:], 0.0
            if not a.route:
                return False
        a.progress += self.town.walk_speed
        moved = False
        while a.route and a.progress >= self.map.distance(a.location, a.route[0]):
            a.progress -= self.map.distance(a.location, a.route[0])
            self.versions[a.location] += 1
            self._at[a.location].discard(a.name)
            a.location = a.route.pop(0)
            self._at[a.location].add(a.name)
            self.versions[a.location] += 1
            moved = True
        if not a.route:
            a.progress = 0.0
        return moved

    def _perceive(self, a: Agent) -> list[tuple[str, str]]:
        """New observations about what is near (at most ATTENTION), skipping any already held."""
        places = self.nearby[a.location]
        versions = tuple(self.versions[p] for p in places)
        if versions == a.perceived:
            return []
        new: list[tuple[str, str]] = []
        for place in places:
            for other in sorted(n for n in self._occupants(place) if n != a.name):
                text = doing(other, self.agents[other].block_activity)[:SEEN_CHARS]
                if a.seen.get(other) != text:
                    new.append((other, text))
            for key, room, thing in self._things_at.get(place, ()):
                if key not in self.objects:
                    continue
                text = f"the {thing} in the {room} of {place} is {self.objects[key]}"
                if a.seen.get(key) != text:
                    new.append((key, text))
        if len(new) <= ATTENTION:
            a.perceived = versions  # everything near has been taken in
        return new[:ATTENTION]

    def _occupants(self, place: str) -> list[str]:
        """The agents in ``place`` and not on their way out, in name order."""
        return sorted(n for n in self._at[place] if not self.agents[n].route)

    def _update_objects(self) -> None:
        """Objects are in use while an occupant's activity names one of their uses.

        Only the buildings stirred this step (someone arrived, left, or changed activity) are looked
        at, in the town's order: looking at every object every step was quadratic in effect, as a
        larger town has more of both agents and objects.
        """
        stirred, self._stirred = self._stirred, set()
        for building in sorted(stirred & self._things_in.keys(), key=self._town_order.__getitem__):
            acts = [self.agents[n].activity.lower() for n in self._at[building] if not self.agents[n].route]
            for key, thing in self._things_in[building]:
                used = any(u in act for act in acts for u in thing.uses)
                state = thing.active if used else thing.idle
                if self.objects.get(key, thing.idle) != state:
                    self.versions[building] += 1
                    self.events.log(self.now(), "", f"the {thing.name} is {state}", building)
                self.objects[key] = state

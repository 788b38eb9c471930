"""The simulation: a simpy clock, one process per agent, model calls batched per step.

Each step (10 simulated seconds by default) every agent process wakes, and, in
order: makes its day plan at wake-up, takes the action its plan gives for now
(decomposing the hour block it enters), walks toward the action's place,
perceives what is near (other agents and object states, at most ``ATTENTION``
new things a step; an observation identical to the one it holds for the same
thing is not written again), decides whether a poignant observation warrants
re-planning, talks with a co-located agent, and reflects when its trigger fires.

What an agent needs from the model it *asks*: the agent process yields, a world
process that runs after all agents at the same simulated time answers every
question of the step in one batch per purpose (a back-end runs them
concurrently), writes all new memories in one transaction (one embedding batch
across agents), and resumes the agents in a fixed order. Plans, decompositions
and reflections, a few per agent per day, call the model directly.

The run is deterministic: agents act in name order, answers go to whoever
asked, and nothing reads the wall clock.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Generator
from datetime import datetime
from typing import Any

import simpy

from memstream.errors import MemstreamError
from memstream.models.base import ChatModel, Message
from memstream.models.offline import OfflineChatModel
from memstream.offline_text import gerund
from memstream.planning import decompose, plan_day, react_prompt, replan
from memstream.planning import prompts as planning_prompts
from memstream.planning.parse import parse_reaction
from memstream.reflection import reflect
from memstream.reflection.reflect import THRESHOLD
from memstream.sim.agent import SLEEPING, Agent, Conversation
from memstream.sim.ask import Ask
from memstream.sim.conversation import Conversations
from memstream.sim.events import EventLog
from memstream.sim.world import Map, Resident, Town
from memstream.stream import OBSERVATION, MemoryStream, new_memory, rate_importance
from memstream.stream.importance import FALLBACK_IMPORTANCE, parse_importance
from memstream.stream.prompts import IMPORTANCE_PURPOSE, importance_messages
from memstream.timeutil import from_epoch, to_epoch

log = logging.getLogger(__name__)

#: New things an agent takes in per step (the reference implementation's attention bandwidth).
ATTENTION = 3
#: Observations this poignant or more make the agent consider changing its plan.
REACT_IMPORTANCE = 7
REACT_COOLDOWN_S = 1800      # an agent re-plans at most this often (no storms of agents reacting to reactions)
SEEN_CHARS = 120             # what an agent notes of another's activity
AFTER_AGENTS = 2             # simpy priority: later than every agent event at the same time
IDENTITY = "identity"  # the kind of the memories an agent starts with


class Simulation(Conversations):
    def __init__(self, town: Town, residents: list[Resident], stream: MemoryStream, chat: ChatModel,
                 events: EventLog, *, start: datetime, step_s: int = 10) -> None:
        self.town, self.map, self.stream, self.chat, self.events = town, Map(town), stream, chat, events
        self.step_s = step_s
        self.tz = start.tzinfo
        self.agents = {r.name: Agent(r, r.home or sorted(self.map.buildings)[0]) for r in residents}
        self.order = sorted(self.agents)
        self._at: dict[str, set[str]] = defaultdict(set)  # building -> agents there (arrived or leaving)
        self._index_locations()
        self.env = simpy.Environment(initial_time=to_epoch(start))
        self.conversations: dict[str, Conversation] = {}  # agent -> its conversation
        self.objects: dict[str, str] = {}                  # "building/room/object" -> state
        self.versions: dict[str, int] = defaultdict(int)   # building -> bumps on any visible change
        self.nearby = {b: sorted(o for o in self.map.buildings if self.map.area_of[o] == self.map.area_of[b]
                                 and self.map.distance(b, o) <= town.vision_radius) for b in self.map.buildings}
        self.agent_steps = 0
        self.model_failures = 0
        self._pending: list[tuple[str, Ask]] = []
        self._answers: dict[str, Any] = {}
        self._writes: list[Any] = []
        self._round = self.env.event()
        self._fallback = OfflineChatModel()
        self._started = False
        self.last_tick = self.env.now
        self.on_tick: Callable[[Simulation], bool] | None = None  # return True to stop

    # -- state ---------------------------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        return {"time": self.last_tick, "agents": [self.agents[n].get_state() for n in self.order],
                "conversations": [{"a": c.a, "b": c.b, "turns": c.turns, "next": c.next_speaker, "place": c.place}
                                  for c in {id(c): c for c in self.conversations.values()}.values()],
                "objects": self.objects, "versions": dict(self.versions), "agent_steps": self.agent_steps}

    def set_state(self, state: dict[str, Any]) -> None:
        for s in state["agents"]:
            self.agents[s["name"]].set_state(s)
        self.conversations = {}
        for c in state["conversations"]:
            conv = Conversation(c["a"], c["b"], [tuple(t) for t in c["turns"]], c["next"], c["place"])
            self.conversations[conv.a] = self.conversations[conv.b] = conv
        self.objects, self.versions = dict(state["objects"]), defaultdict(int, state["versions"])
        self.agent_steps = state["agent_steps"]
        self._index_locations()

    def _index_locations(self) -> None:
        self._at.clear()
        for name, a in self.agents.items():
            self._at[a.location].add(name)

    def seed_memories(self) -> None:
        """Each agent starts knowing its identity, as in the paper: its situation and whom it knows."""
        now = self.now()
        for name in self.order:
            r = self.agents[name].resident
            facts = ([f"{name}'s current situation: {r.situation}"] if r.situation else []) + [
                f"{name} knows {other}: {how}" for other, how in sorted(r.relationships.items())]
            if facts:
                ratings = rate_importance(self.chat, facts)
                for text, imp in zip(facts, ratings, strict=True):
                    self.write(name, text, IDENTITY, imp, now)
        self._flush()

    # -- the clock -------------------------------------------------------------------------------

    def now(self) -> datetime:
        """The simulated time of the step under way (or of the last step, after a run)."""
        return from_epoch(self.last_tick).astimezone(self.tz)

    def run(self, until: datetime) -> None:
        """Advance the clock to ``until``. A Simulation runs once; to go on, resume from a checkpoint."""
        if self._started:
            raise RuntimeError("this simulation has already run; resume its run directory instead")
        self._started = True
        for name in self.order:
            self.env.process(self._agent_process(self.agents[name]))
        self.env.process(self._world_process())
        self.env.run(until=to_epoch(until) + self.step_s / 2)

    def _after_agents(self, delay: float) -> simpy.Event:
        """An event at ``now + delay`` that fires after every agent's event at that time."""
        event = self.env.event()
        event._ok, event._value = True, None
        self.env.schedule(event, priority=AFTER_AGENTS, delay=delay)
        return event

    def _agent_process(self, agent: Agent) -> Generator[simpy.Event, Any, None]:
        while True:
            yield self.env.timeout(self.step_s)
            thinking = self._step(agent, from_epoch(self.env.now).astimezone(self.tz))
            answer = None
            while True:
                try:
                    ask = thinking.send(answer)
                except StopIteration:
                    break
                self._pending.append((agent.name, ask))
                yield self._round
                answer = self._answers.pop(agent.name)

    def _world_process(self) -> Generator[simpy.Event, Any, None]:
        while True:
            yield self._after_agents(self.step_s)
            self.last_tick = self.env.now
            while self._pending:
                self._answer_round()
                self._flush()
                done, self._round = self._round, self.env.event()
                done.succeed()
                yield self._after_agents(0)
            self._flush()
            self._update_objects()
            self.agent_steps += len(self.agents)
            if self.on_tick and self.on_tick(self):
                raise simpy.core.StopSimulation(None)

    def _answer_round(self) -> None:
        """Every pending question of this round, one batch per purpose, in agent order."""
        pending = sorted(self._pending, key=lambda p: p[0])
        self._pending = []
        by_purpose: dict[str, list[tuple[str, Ask]]] = defaultdict(list)
        for name, ask in pending:
            by_purpose[ask.purpose].append((name, ask))
        for purpose in sorted(by_purpose):
            asks = by_purpose[purpose]
            flat = [m for _, ask in asks for m in ask.batch]
            texts = self._complete(flat, purpose)
            i = 0
            for name, ask in asks:
                answers = []
                for text in texts[i:i + len(ask.batch)]:
                    try:
                        answers.append(ask.parse(text) if text is not None else None)
                    except MemstreamError as e:  # unparseable: the agent's fallback handles None
                        log.warning("%s: unusable %s answer (%s); falling back", name, purpose, e)
                        self.model_failures += 1
                        answers.append(None)
                i += len(ask.batch)
                self._answers[name] = answers

    def _complete(self, batch: list[list[Message]], purpose: str) -> list[str | None]:
        try:
            return list(self.chat.complete_batch(batch, purpose=purpose, temperature=0.0))
        except MemstreamError as e:  # the back-end already retried; one by one, then give up per call
            log.warning("%s batch failed (%s); retrying one by one", purpose, e)
            out: list[str | None] = []
            for messages in batch:
                try:
                    out.append(self.chat.complete(messages, purpose=purpose, temperature=0.0))
                except MemstreamError as e2:
                    log.warning("%s call failed (%s); falling back", purpose, e2)
                    self.model_failures += 1
                    out.append(None)
            return out

    def _stage(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a planning or reflection stage; if the model fails for good, the offline rules stand in."""
        self._flush()
        try:
            return fn(*args, chat=self.chat)
        except MemstreamError as e:
            log.warning("%s failed (%s); using the offline stand-in for this step", fn.__name__, e)
            self.model_failures += 1
            return fn(*args, chat=self._fallback)

    def _flush(self) -> None:
        if self._writes:
            writes, self._writes = self._writes, []
            self.stream.extend(writes)

    def write(self, owner: str, text: str, kind: str, importance: int, at: datetime, **metadata: Any) -> None:
        self._writes.append(new_memory(owner=owner, text=text, kind=kind, created_at=at, importance=importance,
                                       metadata=metadata))

    # -- one agent, one step ---------------------------------------------------------------------

    def _step(self, a: Agent, now: datetime) -> Generator[Ask, Any, None]:
        r = a.resident
        awake = r.wake <= f"{now:%H:%M}" < r.sleep
        if awake and (a.plan is None or a.plan.day.date() != now.date()):
            a.plan = self._stage(plan_day, self.stream, r, now)
            self.events.log(now, a.name, "plans the day: " + "; ".join(s.activity for s in a.plan.strokes),
                            a.location)
        conversation = self.conversations.get(a.name)
        if conversation:
            activity, block_activity, target = f"talking with {conversation.other(a.name)}", "talking", a.location
        elif not awake or a.plan is None:
            activity = block_activity = SLEEPING
            target = r.home or a.location
        else:
            block = a.plan.block_at(now)
            if not block.actions and block.activity != SLEEPING:
                self._stage(decompose, self.stream, r, a.plan, now)
            action = a.plan.action_at(now) or block
            activity, block_activity = action.activity, block.activity
            target = self.map.resolve(action.location, r.home or a.location)
        moved = self._walk(a, target)
        if activity != a.activity or moved:
            where = a.location if not a.route else f"on the way to {a.route[-1]}"
            self.events.log(now, a.name, activity, where)
        if block_activity != a.block_activity or moved:
            self.versions[a.location] += 1
        a.activity, a.block_activity = activity, block_activity

        new = self._perceive(a) if activity != SLEEPING else []
        if new:
            ratings = yield Ask(IMPORTANCE_PURPOSE, [importance_messages(t) for _, t in new], parse_importance)
            ratings = [x if x is not None else FALLBACK_IMPORTANCE for x in ratings]
            for (key, text), imp in zip(new, ratings, strict=True):
                a.seen[key] = text
                self.write(a.name, text, OBSERVATION, imp, now, about=key)
            a.accumulated += sum(ratings)
            top_imp, top_text = max(zip(ratings, (t for _, t in new), strict=True))
            if (top_imp >= REACT_IMPORTANCE and awake and a.plan is not None and not conversation
                    and now.timestamp() >= a.next_react_s):
                a.next_react_s = now.timestamp() + REACT_COOLDOWN_S
                self._flush()
                minute = now.replace(second=0, microsecond=0)
                decision = (yield Ask(planning_prompts.REACT_PURPOSE,
                                      [react_prompt(self.stream, a.plan, r, top_text, minute)], parse_reaction))[0]
                if decision is not None and decision.react:
                    a.plan = self._stage(replan, self.stream, a.plan, r, top_text, decision.reaction, minute)
                    self.events.log(now, a.name, f"reacts to '{top_text}': {decision.reaction}", a.location)

        conversation = self.conversations.get(a.name)  # it may have ended while this agent waited
        if conversation and not conversation.ended:
            if conversation.next_speaker == a.name:
                yield from self._speak(a, conversation, now)
        elif awake and not a.route and now.timestamp() >= a.next_chat_s:
            yield from self._maybe_start_conversation(a, now)

        if a.accumulated >= THRESHOLD:
            result = self._stage(reflect, self.stream, a.name, now)
            a.accumulated = 0
            self.events.log(now, a.name, f"reflects: {len(result.insights)} insights", a.location)

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
                text = f"{other} is {gerund(self.agents[other].block_activity)}"[:SEEN_CHARS]
                if a.seen.get(other) != text:
                    new.append((other, text))
            for key in sorted(k for k in self.objects if k.startswith(place + "/")):
                _, room, thing = key.split("/")
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
        """Objects are in use while an occupant's activity names one of their uses."""
        busy: dict[str, list[str]] = defaultdict(list)
        for name in self.order:
            a = self.agents[name]
            if not a.route:
                busy[a.location].append(a.activity.lower())
        for area in self.town.areas:
            for building in area.buildings:
                acts = busy.get(building.name, [])
                for room in building.rooms:
                    for thing in room.objects:
                        key = f"{building.name}/{room.name}/{thing.name}"
                        used = any(u in act for act in acts for u in thing.uses)
                        state = thing.active if used else thing.idle
                        if self.objects.get(key, thing.idle) != state:
                            self.versions[building.name] += 1
                            self.events.log(self.now(), "", f"the {thing.name} is {state}", building.name)
                        self.objects[key] = state

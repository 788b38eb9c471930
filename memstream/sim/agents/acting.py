"""Planning and acting: an agent's inner life and what it does (owns each agent's
:class:`~memstream.sim.agents.agent.Mind`).

Whispers heard as thoughts; reflection when its trigger fired; at wake-up after a day lived a
revision of what the agent is currently about, then the day plan; every step the action the plan
gives for now (decomposing the hour block it enters; a new action is a memory of its own, "Ann is
serving coffee"), one step along the way to its place; and, on a poignant observation, whether to
change the plan.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime

from memstream.models import Stage, concurrently
from memstream.offline_text import doing
from memstream.planning import (
    SLEEPING,
    Stroke,
    decompose_stage,
    plan_day_stage,
    react_stage,
    revise_stage,
    routine_plan,
)
from memstream.reflection import maybe_reflect_stage
from memstream.sim.agents.agent import Agent, Conversation, Visit
from memstream.sim.agents.movement import Movement
from memstream.sim.agents.poignancy import PoignancyTally
from memstream.sim.agents.spatial import Spatial
from memstream.sim.agents.whisper import Whisper
from memstream.sim.events import EventLog
from memstream.sim.town.scene import Scene
from memstream.stream import OBSERVATION, THOUGHT, MemoryStream, importance_stage, new_memory
from memstream.trust import Checker

#: What adds visits to an agent's day plan: given the agent, the time and the model's strokes, the visit strokes
#: and the visits they are.
Seek = Callable[[Agent, datetime, list[Stroke]], tuple[list[Stroke], list[Visit]]]
#: A whispered memory's provenance, as the gate is told it and the memory records it.
WHISPERED = "whispered"

REACT_COOLDOWN_S = 1800      # an agent re-plans at most this often (no storms of agents reacting to reactions)
#: The importance of an agent's own action when no model rated it (asleep, no plan): the paper's anchor for
#: the mundane. A planned action shares the rating the model gave its block's decomposition.
IDLE_IMPORTANCE = 1


class Acting:
    def __init__(self, stream: MemoryStream, events: EventLog, movement: Movement, scene: Scene,
                 conversation_of: Callable[[str], Conversation | None], ablate: frozenset[str],
                 whispers: Sequence[Whisper], spatial: Spatial, checker: Checker | None = None,
                 poignancy: PoignancyTally | None = None, seek: Seek | None = None) -> None:
        self.seek = seek  # the visits to tell news an agent adds to its day plan (memstream.sim.talk.visits)
        self.stream, self.events, self.movement, self.scene, self.spatial = stream, events, movement, scene, spatial
        self.checker = checker or Checker.off()
        self.poignancy = poignancy if poignancy is not None else PoignancyTally()
        self.conversation_of, self.ablate = conversation_of, ablate
        self.whispers: dict[str, list[Whisper]] = defaultdict(list)
        self.add_whispers(whispers)
        #: Insights this process's reflections wrote, and dropped by check (restatement, unsupported ...).
        self.insights_written = 0
        self.insights_dropped: Counter[str] = Counter()

    def add_whispers(self, whispers: Sequence[Whisper]) -> None:
        """Whispers to give when the clock reaches them (a running run hears new ones between steps)."""
        for w in whispers:
            self.whispers[w.agent].append(w)
        for agent in {w.agent for w in whispers}:
            self.whispers[agent].sort(key=lambda w: (w.at, w.id))

    def hear_whispers(self, a: Agent, now: datetime) -> Stage[None]:
        """The agent's inner voice: the whispers due by now that it has not heard, as thoughts."""
        due = [w for w in self.whispers[a.name] if w.at <= now and w.id not in a.mind.heard]
        if not due:
            return
        texts = [w.text for w in due]
        verdicts, ratings = yield from concurrently([
            self.checker.gate_stage(a.name, texts, what="whisper", sources=[WHISPERED] * len(due), at=now.isoformat()),
            importance_stage(texts)])
        for w, verdict, importance in zip(due, verdicts, ratings, strict=True):
            if verdict.allowed:
                self.stream.write(new_memory(owner=a.name, text=w.text, kind=THOUGHT, created_at=now,
                                             importance=importance, metadata={"whisper": w.id, "source": WHISPERED}))
                self.spatial.hear(a, w.text, now)
            else:
                self.events.log(now, a.name, f"keeps out a whisper ({verdict.reason}): {w.text[:80]}", a.where)
            a.mind.heard.append(w.id)
        if verdicts[-1].allowed:
            self.events.log(now, a.name, f"hears a whisper: {due[-1].text[:80]}", a.where)

    def reflect_if_due(self, a: Agent, now: datetime) -> Stage[None]:
        """The reflection trigger reads the stream, which holds what the agent perceived up to its last step."""
        a.senses.perceived_since_check = False
        result = yield from maybe_reflect_stage(self.stream, a.name, now, checker=self.checker)
        if result is not None:
            dropped = result.dropped_by_check()
            self.insights_written += len(result.insights)
            self.insights_dropped.update(dropped)
            listed = ", ".join(f"{n} {check}" for check, n in sorted(dropped.items()))
            kept_out = f" ({listed} dropped)" if dropped else ""
            self.events.log(now, a.name, f"reflects: {len(result.insights)} insights{kept_out}", a.where)

    def plan_the_day(self, a: Agent, now: datetime) -> Stage[None]:
        """After a day lived, revise what the agent is currently about; then plan the day from that."""
        mind = a.mind
        if "planning" in self.ablate:
            mind.plan = routine_plan(a.identity, now)
            return
        revision = None
        if mind.plan is not None:  # a new day after one lived
            revision = yield from revise_stage(self.stream, a.identity, now)
            if revision:
                mind.currently = revision.currently
                self.events.log(now, a.name, f"is now: {revision.currently}", a.where)
        a.social.visits = []
        seek = self.seek

        def visits(strokes: list[Stroke]) -> list[Stroke]:
            assert seek is not None
            added, a.social.visits = seek(a, now, strokes)
            return added

        mind.plan = yield from plan_day_stage(self.stream, a.identity, now,
                                              revision=revision.memory_id if revision else None,
                                              add=visits if seek is not None else None)
        self.events.log(now, a.name, "plans the day: " + "; ".join(s.activity for s in mind.plan.strokes), a.where)

    def act(self, a: Agent, now: datetime, awake: bool) -> Stage[None]:
        """Take the action the plan gives for now (decomposing a block on entry), one step along the way."""
        r, mind, body = a.identity, a.mind, a.body
        was = (body.location, not body.route, mind.activity)  # what the objects where it stands depend on
        conversation = self.conversation_of(a.name)
        importance = IDLE_IMPORTANCE
        if conversation:
            activity, block_activity, target = f"talking with {conversation.other(a.name)}", "talking", body.location
        elif not awake or mind.plan is None:
            activity = block_activity = SLEEPING
            target = r.home or body.location
        else:
            block = mind.plan.block_at(now)
            if not block.actions and block.activity != SLEEPING:
                yield from decompose_stage(self.stream, r, mind.plan, now)
            action = mind.plan.action_at(now) or block
            activity, block_activity = action.activity, block.activity
            target = self.spatial.resolve(a, action.location, r.home or body.location)  # among the places it knows
            importance = block.importance or IDLE_IMPORTANCE
        moved = self.movement.walk(a, target)
        if moved:
            self.spatial.arrive(a, now, inside=not body.route)
        if activity != mind.activity or moved:
            self.events.log(now, a.name, activity, a.where)
        if activity != mind.activity and not conversation and "observation" not in self.ablate:  # its own new action
            plan = mind.plan
            self.stream.write(new_memory(
                owner=a.name, text=f"{doing(a.name, activity)} at {target}", kind=OBSERVATION, created_at=now,
                importance=importance, metadata={"own": True},
                cites=(plan.memory_id,) if plan and plan.memory_id and activity != SLEEPING else ()))
            a.senses.perceived_since_check = True
        if block_activity != mind.block_activity or moved:
            self.scene.changed(body.location)
        mind.activity, mind.block_activity = activity, block_activity
        if (body.location, not body.route, mind.activity) != was:
            self.scene.stir(was[0], body.location)

    def consider(self, a: Agent, importance: int, observation: str, now: datetime, awake: bool) -> Stage[None]:
        """Whether a poignant observation (on the model's own scale: ``sim.poignancy``) changes the agent's
        plan (at most once per cooldown)."""
        mind = a.mind
        if (self.poignancy.poignant(importance) and awake and mind.plan is not None and not self.conversation_of(a.name)
                and "planning" not in self.ablate and now.timestamp() >= mind.next_react_s):
            mind.next_react_s = now.timestamp() + REACT_COOLDOWN_S
            decision = yield from react_stage(self.stream, mind.plan, a.identity, observation, now)
            if decision.react:
                mind.plan = decision.plan
                self.events.log(now, a.name, f"reacts to '{observation}': {decision.reaction}", a.where)

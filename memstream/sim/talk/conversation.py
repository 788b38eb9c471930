"""Conversations between two co-located agents: who starts, turn-taking, and what each side keeps.

An agent offers a conversation with the time of day, how it last talked with the other and what it
has to tell it (:mod:`memstream.sim.talk.offer`); what came of each offer is counted (``Social.offers``),
and each side notes what it said to the other (``Social.known``), so its next offer knows.
As in the reference implementation: when a conversation starts, each side sums up what it knows
of the other from its memories (``ABOUT_K`` retrieved about the other); each utterance is
conditioned on that relationship, on ``TURN_K`` memories retrieved on the other and on the last
utterance, and on the dialogue so far; a conversation ends when a side says goodbye, when a line
repeats one already said (small models go round in circles), or after ``MAX_TURNS`` lines. Then
each side rates the conversation's poignancy with the model (so talk feeds the reflection
trigger), writes a memo and a planning thought that cite the dialogue, and considers re-planning
the rest of its day in its light (an invitation for later today becomes an appointment). Every
step here is a stage: it yields requests and the simulation answers them in the step's batch.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

from memstream.models import Request, Stage, concurrently
from memstream.planning import Stroke, react_stage
from memstream.sim.agents.agent import SLEEPING, Agent, Conversation, Visit
from memstream.sim.agents.spatial import TOLD, Spatial
from memstream.sim.events import EventLog
from memstream.sim.talk import prompts
from memstream.sim.talk.offer import concerned, offer_messages, untold
from memstream.sim.talk.parse import (
    Turn,
    parse_plans,
    parse_relationship,
    parse_summary,
    parse_talk,
    parse_turn,
)
from memstream.sim.talk.recent import day_began
from memstream.sim.talk.visits import due, plan_visits
from memstream.stream import DIALOGUE, FALLBACK_IMPORTANCE, THOUGHT, MemoryStream, new_memory, parse_importance
from memstream.trust import Checker

CHAT_COOLDOWN_S = 3 * 3600   # the same pair talks again after this long
OFFER_COOLDOWN_S = 3600      # an agent considers starting a conversation at most this often
ABOUT_K = 50                 # memories retrieved about the other for the relationship (the reference's 50)
TURN_K = 15                  # memories a speaker retrieves for each line (the reference's 15)
#: The conversation rules a run follows (its config's ``talk_rules``): 1, as recorded before #40 (anyone here
#: approached alike, no day's attention, a line retrieves on the other and the last line); 2, the day's attention
#: and the weights below, no visits; 3, also visits to tell news (:mod:`memstream.sim.talk.visits`).
TALK_RULES = 3
#: The rules from which an agent with news plans visits to the people it concerns.
VISITING_RULES = 3
#: Others an agent has attention for in a day (since it woke): past this many, it starts no conversation and
#: is not approached. People talk with a handful of others a day, not with everyone they pass; so whom one
#: has talked with grows day by day, in degrees.
ATTENTION_PER_DAY = 6
#: How much likelier an agent approaches someone its news of the day names (it seeks whom the news
#: concerns) or someone it has talked with before, than a stranger.
CONCERNED_WEIGHT, KNOWN_WEIGHT = 4, 2


def attention_spent(a: Agent, now: datetime) -> bool:
    """Whether ``a`` has talked with ``ATTENTION_PER_DAY`` others since its day began."""
    began = day_began(now, a.identity.wake).timestamp()
    return sum(t.at >= began for t in a.social.known.values()) >= ATTENTION_PER_DAY

class Conversations:
    """Who is talking with whom, and the conversation stages an agent goes through (a component
    of :class:`~memstream.sim.engine.Simulation`; owns each agent's
    :class:`~memstream.sim.agents.agent.Social` side)."""

    def __init__(self, agents: dict[str, Agent], stream: MemoryStream, events: EventLog,
                 occupants: Callable[[str], list[str]], ablate: frozenset[str], seed: int, spatial: Spatial,
                 checker: Checker | None = None, rules: int = TALK_RULES) -> None:
        self.rules = rules  # TALK_RULES: a run recorded under older rules replays as it was
        self.agents, self.stream, self.events, self.occupants = agents, stream, events, occupants
        self.seed = seed  # whom an agent approaches among those here is drawn from it (approached)
        self.spatial = spatial  # the places a side names become known to the other
        self.checker = checker or Checker.off()
        self.ablate = ablate  # without observation nothing heard is written; without planning, no re-planning
        self.by_agent: dict[str, Conversation] = {}

    def of(self, name: str) -> Conversation | None:
        return self.by_agent.get(name)

    def get_state(self) -> list[dict[str, Any]]:
        return [c.get_state() for c in {id(c): c for c in self.by_agent.values()}.values()]

    def set_state(self, state: list[dict[str, Any]]) -> None:
        self.by_agent = {}
        for c in state:
            conv = Conversation.from_state(c)
            self.by_agent[conv.a] = self.by_agent[conv.b] = conv

    def converse(self, a: Agent, now: datetime, awake: bool) -> Stage[None]:
        """``a``'s part this step: its line if it is its turn, else perhaps a new conversation."""
        conversation = self.of(a.name)
        if conversation and not conversation.ended:
            if conversation.next_speaker == a.name:
                yield from self.speak(a, conversation, now)
        elif awake and not conversation and not a.body.route:
            visit = due(a, now) if self.rules >= VISITING_RULES else None
            if visit is not None and (yield from self.call_on(a, visit, now)):
                return
            if now.timestamp() >= a.social.next_chat_s:
                yield from self.maybe_start(a, now)

    def plan_visits(self, a: Agent, now: datetime, strokes: list[Stroke]) -> tuple[list[Stroke], list[Visit]]:
        """The visits ``a`` adds to its day plan to tell its news to those it concerns
        (:func:`memstream.sim.talk.visits.plan_visits`); a place it did not know it now knows, as told (the
        town knows where its people live and work)."""
        added, visits = plan_visits(self.stream, a, self.agents, now, strokes,
                                    lambda place: self.spatial.map.resolve(place, ""))
        for visit in visits:
            self.spatial.learn(a, visit.place, TOLD, now)
        return added, visits

    def call_on(self, a: Agent, visit: Visit, now: datetime) -> Stage[bool]:
        """``a`` is at the place of a visit in its hours: it opens a conversation with the first of those it came
        to tell who is here and free (no offer asked: it came to talk), within both sides' day of attention."""
        t = now.timestamp()
        if attention_spent(a, now):
            return False
        here = set(self.occupants(a.body.location))
        free = [n for n in visit.persons if n in here and n not in self.by_agent and a.social.cooldown.get(n, 0.0) <= t
                and self.agents[n].mind.activity != SLEEPING and not attention_spent(self.agents[n], now)]
        if not free:
            return False
        other = self.agents[free[0]]
        visit.persons.remove(other.name)
        a.social.next_chat_s = t + OFFER_COOLDOWN_S
        self.events.log(now, a.name, f"calls on {other.name} to tell: {visit.news[:80]}", a.body.location)
        yield from self._open(a, other, now, visit.news)
        return True

    def maybe_start(self, a: Agent, now: datetime) -> Stage[None]:
        """Offer a conversation to one of the willing agents here (drawn by the run's seed), if the model says
        ``a`` would."""
        t = now.timestamp()
        attentive = self.rules >= 2
        if attentive and attention_spent(a, now):
            return
        here = [n for n in self.occupants(a.body.location) if n != a.name and n not in self.by_agent
                and a.social.cooldown.get(n, 0.0) <= t and self.agents[n].mind.activity != SLEEPING
                and not (attentive and attention_spent(self.agents[n], now))]
        if not here:
            return
        weights = self._weights(a, sorted(here), now) if attentive and len(here) > 1 else None
        other = self.agents[self.approached(a.name, sorted(here), t, weights)]
        a.social.next_chat_s = t + OFFER_COOLDOWN_S
        messages = offer_messages(self.stream, a, other, now, self._recalled(a.name, [other.name], now, TURN_K))
        talk = yield Request(prompts.START_PURPOSE, messages, parse_talk)
        offers = a.social.offers
        offers.made += 1
        busy = other.name in self.by_agent or a.name in self.by_agent  # taken while the answer was on its way
        offers.accepted += bool(talk and not busy)
        offers.declined += not talk
        offers.busy += bool(talk and busy)
        if not (talk and not busy):
            a.social.cooldown[other.name] = t + OFFER_COOLDOWN_S
            return
        yield from self._open(a, other, now)

    def _open(self, a: Agent, other: Agent, now: datetime, purpose: str = "") -> Stage[None]:
        """The conversation of ``a`` with ``other`` begins: each side sums up what it knows of the other."""
        conv = Conversation(a.name, other.name, [], a.name, a.body.location, purpose=purpose)
        self.by_agent[a.name] = self.by_agent[other.name] = conv
        self.events.log(now, a.name, f"starts a conversation with {other.name}", a.body.location)
        sides = [conv.a, conv.b]
        summaries = yield [Request(prompts.RELATIONSHIP_PURPOSE, prompts.relationship_messages(
            self.agents[n].identity.describe(), n, conv.other(n),
            self._recalled(n, [conv.other(n)], now, ABOUT_K)), parse_relationship) for n in sides]
        conv.relationships = {n: s or f"{n} does not know {conv.other(n)} well yet"
                              for n, s in zip(sides, summaries, strict=True)}

    def _weights(self, a: Agent, candidates: list[str], now: datetime) -> list[int]:
        """How likely ``a`` approaches each candidate: ``CONCERNED_WEIGHT`` if its news of the day names them,
        ``KNOWN_WEIGHT`` if it has talked with them before, else 1."""
        named = concerned(self.stream, a, candidates, now)
        return [CONCERNED_WEIGHT if n in named else KNOWN_WEIGHT if n in a.social.known else 1 for n in candidates]

    def approached(self, name: str, candidates: list[str], t: float, weights: list[int] | None = None) -> str:
        """Whom ``name`` approaches at ``t`` among ``candidates`` (more likely, the more ``weights``): drawn from
        the run's seed, the agent and the time (no generator state to checkpoint: a resumed run draws the same)."""
        if len(candidates) == 1:
            return candidates[0]
        draw = random.Random(f"{self.seed}:{name}:{t:.0f}")
        return draw.choices(candidates, weights=weights)[0] if weights else draw.choice(candidates)

    def speak(self, a: Agent, conv: Conversation, now: datetime) -> Stage[None]:
        """``a``'s next line; the conversation ends on a goodbye, a repeated line, or after MAX_TURNS lines."""
        other = conv.other(a.name)
        # what it has to tell the other is recalled on its own words: on the other's name alone, an agent's own
        # freshest news ranks below everything older that names the other
        came = [conv.purpose] if conv.purpose and a.name == conv.a else []  # what it came to tell (a visit)
        queries = [other] + came + ([conv.turns[-1][1]] if conv.turns else []) + (
            untold(self.stream, a, other, now) if self.rules >= 2 else [])
        messages = prompts.turn_messages(a.identity.describe(), a.name, other, f"{now:%H:%M}", conv.place,
                                         conv.relationships.get(a.name, ""), self._recalled(a.name, queries, now,
                                                                                            TURN_K),
                                         prompts.dialogue_lines(conv.turns),
                                         conv.purpose if a.name == conv.a else "")
        turn = (yield Request(prompts.TURN_PURPOSE, messages, partial(parse_turn, name=a.name))) or Turn(
            utterance="...", end=True)
        repeated = any(said == turn.utterance for _, said in conv.turns)  # going round in circles: it is over
        conv.turns.append((a.name, turn.utterance))
        self.events.log(now, a.name, f"says to {other}", conv.place, utterance=turn.utterance)
        conv.next_speaker = other
        if turn.end or repeated or len(conv.turns) >= prompts.MAX_TURNS:
            yield from self._end(conv, now)

    def _end(self, conv: Conversation, now: datetime) -> Stage[None]:
        """Each side keeps the dialogue, a memo and a planning thought (unless observation is ablated);
        then both consider re-planning in its light (unless planning is)."""
        conv.ended = True  # the other side must not speak while the memories are written
        for name in (conv.a, conv.b):
            self.spatial.hear(self.agents[name], " ".join(said for who, said in conv.turns if who != name), now)
            self.agents[name].social.talked(conv.other(name), now.timestamp(),
                                            [said for who, said in conv.turns if who == name], len(conv.turns))
        thoughts = [] if "observation" in self.ablate else (yield from self._remember(conv, now))
        for name in (conv.a, conv.b):
            self.agents[name].social.cooldown[conv.other(name)] = now.timestamp() + CHAT_COOLDOWN_S
            del self.by_agent[name]
        self.events.log(now, conv.a, f"ends the conversation with {conv.b}", conv.place)
        if "planning" not in self.ablate:
            yield from concurrently([self._reconsider(name, thought, memory_id, conv.other(name), now)
                                     for name, thought, memory_id in thoughts if thought])

    def _remember(self, conv: Conversation, now: datetime) -> Stage[list[tuple[str, str, int]]]:
        """Each side's dialogue (rated by the model), memo and planning thought citing it; the
        (side, planning thought or "", its memory id) of both."""
        dialogue = prompts.dialogue_lines(conv.turns)
        sides = [conv.a, conv.b]
        asked: list[Request[Any]] = []
        for name in sides:
            identity = self.agents[name].identity.describe()
            asked += [Request(prompts.POIGNANCY_PURPOSE, prompts.poignancy_messages(identity, name, dialogue),
                              parse_importance),
                      Request(prompts.SUMMARY_PURPOSE, prompts.summary_messages(conv.a, conv.b, name, dialogue),
                              parse_summary),
                      Request(prompts.PLANS_PURPOSE, prompts.plans_messages(identity, name, f"{now:%A %d %B %Y}",
                                                                          f"{now:%H:%M}", dialogue), parse_plans)]
        answers = yield asked
        kept = yield from concurrently([self._gated(name, conv.other(name), dialogue, answers[3 * i + 1],
                                                    answers[3 * i + 2], now) for i, name in enumerate(sides)])
        thoughts = []
        for i, name in enumerate(sides):
            importance, memo, plans = answers[3 * i: 3 * i + 3]
            dialogue_ok, memo_ok, plans_ok = kept[i]
            other = conv.other(name)
            importance = importance or FALLBACK_IMPORTANCE
            self.agents[name].senses.perceived_since_check = True  # the dialogue counts toward reflection
            if not dialogue_ok:  # what was said is kept out, and so is all the side would draw from it
                thoughts.append((name, "", 0))
                continue
            said = self.stream.write(new_memory(owner=name, text=f"Conversation with {other}:\n{dialogue}",
                                                kind=DIALOGUE, created_at=now, importance=importance,
                                                metadata={"with_": other}))
            if memo_ok:
                self.agents[name].social.known[other].memo = memo or ""
                self.stream.write(new_memory(owner=name, text=memo or f"{name} talked with {other}", kind=THOUGHT,
                                             created_at=now, importance=importance, cites=(said,),
                                             metadata={"with_": other, "memo": True}))
            if not plans_ok:
                thoughts.append((name, "", 0))
                continue
            thought = prompts.PLANS_PREFIX + (plans or f"nothing to plan after talking with {other}")
            planned = self.stream.write(new_memory(owner=name, text=thought, kind=THOUGHT, created_at=now,
                                                   importance=importance, cites=(said,),
                                                   metadata={"with_": other, "planning": True}))
            thoughts.append((name, thought if plans else "", planned))
        return thoughts

    def _gated(self, name: str, other: str, dialogue: str, memo: str | None, plans: str | None,
               now: datetime) -> Stage[tuple[bool, bool, bool]]:
        """Whether the side keeps the dialogue (told by the other), its memo and its planning thought
        (the model's, from the dialogue): each past the write gate, the three asked in one round."""
        texts = [dialogue, memo or "", plans or ""]
        sources = [f"told by {other}", f"{prompts.SUMMARY_PURPOSE} of a conversation with {other}",
                   f"{prompts.PLANS_PURPOSE} after a conversation with {other}"]
        asked = [(t, src) for t, src in zip(texts, sources, strict=True) if t]
        verdicts = iter((yield from self.checker.gate_stage(name, [t for t, _ in asked], what="conversation",
                                                            sources=[src for _, src in asked], at=now.isoformat())))
        return tuple(next(verdicts).allowed if t else True for t in texts)  # type: ignore[return-value]

    def _reconsider(self, name: str, thought: str, memory_id: int, other: str, now: datetime) -> Stage[None]:
        """Whether the conversation changes the rest of the agent's day (react, as to an observation)."""
        agent = self.agents[name]
        mind = agent.mind
        if mind.plan is None or mind.plan.day.date() != now.date() or mind.activity == SLEEPING:
            return
        decision = yield from react_stage(self.stream, mind.plan, agent.identity, thought, now,
                                          evidence=(memory_id,))
        if decision.react:
            mind.plan = decision.plan
            self.events.log(now, name, f"reacts to the conversation with {other}: {decision.reaction}",
                            agent.where)

    def _recalled(self, owner: str, queries: list[str], now: datetime, k: int) -> str:
        """The memories retrieved on each query, merged in turn (the first query's best first), at most ``k``."""
        if not self.stream.has(owner):
            return prompts.memory_lines([])
        found = self.stream.retrieve_many([(owner, q) for q in queries], now=now, k=k)
        merged = {r.memory.id: r for rank in range(k) for recalls in found if rank < len(recalls)
                  for r in [recalls[rank]]}
        return prompts.memory_lines(list(merged.values())[:k])

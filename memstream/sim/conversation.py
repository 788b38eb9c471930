"""Conversations between two co-located agents: who starts, turn-taking, and what each side keeps.

Each utterance is conditioned on the speaker's memories retrieved about the other
and on the dialogue so far; a conversation ends when a side ends it or after
``MAX_TURNS``, and each side stores the whole dialogue and its own summary.
Every step here is a stage: it yields requests and the simulation answers them
in the step's batch.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from memstream.models.request import Request, Stage
from memstream.offline_text import gerund
from memstream.sim import prompts
from memstream.sim.agent import SLEEPING, Agent, Conversation
from memstream.sim.events import EventLog
from memstream.sim.parse import parse_summary, parse_talk, parse_turn
from memstream.stream import DIALOGUE, MemoryStream

CHAT_COOLDOWN_S = 3 * 3600   # the same pair talks again after this long
OFFER_COOLDOWN_S = 3600      # an agent considers starting a conversation at most this often
RECALLED = 5                 # memories a speaker retrieves for a turn

Write = Callable[..., None]  # (owner, text, kind, importance, at, **metadata): a buffered memory write


class Conversations:
    """Who is talking with whom, and the conversation stages an agent goes through (a component
    of :class:`~memstream.sim.engine.Simulation`)."""

    def __init__(self, agents: dict[str, Agent], stream: MemoryStream, events: EventLog, write: Write,
                 occupants: Callable[[str], list[str]]) -> None:
        self.agents, self.stream, self.events, self.write, self.occupants = agents, stream, events, write, occupants
        self.by_agent: dict[str, Conversation] = {}

    def of(self, name: str) -> Conversation | None:
        return self.by_agent.get(name)

    def get_state(self) -> list[dict[str, Any]]:
        unique = {id(c): c for c in self.by_agent.values()}.values()
        return [{"a": c.a, "b": c.b, "turns": c.turns, "next": c.next_speaker, "place": c.place} for c in unique]

    def set_state(self, state: list[dict[str, Any]]) -> None:
        self.by_agent = {}
        for c in state:
            conv = Conversation(c["a"], c["b"], [tuple(t) for t in c["turns"]], c["next"], c["place"])
            self.by_agent[conv.a] = self.by_agent[conv.b] = conv

    def maybe_start(self, a: Agent, now: datetime) -> Stage[None]:
        """Offer a conversation to the first willing agent here, if the model says ``a`` would."""
        t = now.timestamp()
        here = [n for n in self.occupants(a.location) if n != a.name and n not in self.by_agent
                and a.cooldown.get(n, 0.0) <= t and self.agents[n].activity != SLEEPING]
        if not here:
            return
        other = self.agents[here[0]]
        a.next_chat_s = t + OFFER_COOLDOWN_S
        messages = prompts.start_messages(a.resident.describe(), a.name, other.name, f"{now:%H:%M}", a.activity,
                                          a.location, gerund(other.activity),
                                          a.resident.relationships.get(other.name, ""),
                                          self._remembered(a.name, other.name, now))
        talk = yield Request(prompts.START_PURPOSE, messages, parse_talk)
        if talk and other.name not in self.by_agent and a.name not in self.by_agent:
            conv = Conversation(a.name, other.name, [], a.name, a.location)
            self.by_agent[a.name] = self.by_agent[other.name] = conv
            self.events.log(now, a.name, f"starts a conversation with {other.name}", a.location)
        else:
            a.cooldown[other.name] = t + OFFER_COOLDOWN_S

    def speak(self, a: Agent, conv: Conversation, now: datetime) -> Stage[None]:
        """``a``'s next utterance; the conversation ends when a side ends it or after MAX_TURNS."""
        other = conv.other(a.name)
        query = f"{other} " + (conv.turns[-1][1] if conv.turns else "")
        messages = prompts.turn_messages(a.resident.describe(), a.name, other, f"{now:%H:%M}", conv.place,
                                         self._remembered(a.name, query, now), prompts.dialogue_lines(conv.turns))
        turn = (yield Request(prompts.TURN_PURPOSE, messages, parse_turn)) or {"utterance": "...", "end": True}
        conv.turns.append((a.name, turn["utterance"]))
        self.events.log(now, a.name, f"says to {other}", conv.place, utterance=turn["utterance"])
        conv.next_speaker = other
        if turn["end"] or len(conv.turns) >= prompts.MAX_TURNS:
            yield from self._end(conv, now)

    def _end(self, conv: Conversation, now: datetime) -> Stage[None]:
        conv.ended = True  # the other side must not speak while the summaries are written
        dialogue = prompts.dialogue_lines(conv.turns)
        sides = [conv.a, conv.b]
        summaries = yield [Request(prompts.SUMMARY_PURPOSE, prompts.summary_messages(conv.a, conv.b, n, dialogue),
                                   parse_summary) for n in sides]
        for name, summary in zip(sides, summaries, strict=True):
            other = conv.other(name)
            self.write(name, f"Conversation with {other}:\n{dialogue}", DIALOGUE, 4, now, with_=other)
            self.write(name, summary or f"{name} talked with {other}", DIALOGUE, 5, now, with_=other, summary=True)
            self.agents[name].cooldown[other] = now.timestamp() + CHAT_COOLDOWN_S
            del self.by_agent[name]
        self.events.log(now, conv.a, f"ends the conversation with {conv.b}", conv.place)

    def _remembered(self, owner: str, query: str, now: datetime) -> str:
        recalls = self.stream.retrieve(owner, query, now=now, k=RECALLED) if self.stream.has(owner) else []
        return prompts.memory_lines(recalls)

"""Conversations between two co-located agents: who starts, turn-taking, and what each side keeps.

Each utterance is conditioned on the speaker's memories retrieved about the other
and on the dialogue so far; a conversation ends when a side ends it or after
``MAX_TURNS``, and each side stores the whole dialogue and its own summary.
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memstream.offline_text import gerund
from memstream.sim import prompts
from memstream.sim.agent import SLEEPING, Agent, Conversation
from memstream.sim.ask import Ask
from memstream.sim.parse import parse_summary, parse_talk, parse_turn
from memstream.stream import DIALOGUE

if TYPE_CHECKING:
    from memstream.sim.engine import Simulation

CHAT_COOLDOWN_S = 3 * 3600   # the same pair talks again after this long
OFFER_COOLDOWN_S = 3600      # an agent considers starting a conversation at most this often


class Conversations:
    """The conversation steps of :class:`~memstream.sim.engine.Simulation` (a mixin)."""

    def _maybe_start_conversation(self: Simulation, a: Agent, now: datetime) -> Generator[Ask, Any, None]:
        t = now.timestamp()
        here = [n for n in self._occupants(a.location) if n != a.name and n not in self.conversations
                and a.cooldown.get(n, 0.0) <= t and self.agents[n].activity != SLEEPING]
        if not here:
            return
        other = self.agents[here[0]]
        a.next_chat_s = t + OFFER_COOLDOWN_S
        recalls = self.stream.retrieve(a.name, other.name, now=now, k=5) if a.name in self.stream.owners() else []
        messages = prompts.start_messages(a.resident.describe(), a.name, other.name, f"{now:%H:%M}", a.activity,
                                          a.location, gerund(other.activity),
                                          a.resident.relationships.get(other.name, ""), prompts.memory_lines(recalls))
        talk = (yield Ask(prompts.START_PURPOSE, [messages], parse_talk))[0]
        if talk and other.name not in self.conversations and a.name not in self.conversations:
            conv = Conversation(a.name, other.name, [], a.name, a.location)
            self.conversations[a.name] = self.conversations[other.name] = conv
            self.events.log(now, a.name, f"starts a conversation with {other.name}", a.location)
        else:
            a.cooldown[other.name] = t + OFFER_COOLDOWN_S

    def _speak(self: Simulation, a: Agent, conv: Conversation, now: datetime) -> Generator[Ask, Any, None]:
        other = conv.other(a.name)
        query = f"{other} " + (conv.turns[-1][1] if conv.turns else "")
        recalls = self.stream.retrieve(a.name, query, now=now, k=5) if a.name in self.stream.owners() else []
        messages = prompts.turn_messages(a.resident.describe(), a.name, other, f"{now:%H:%M}", conv.place,
                                         prompts.memory_lines(recalls), prompts.dialogue_lines(conv.turns))
        turn = (yield Ask(prompts.TURN_PURPOSE, [messages], parse_turn))[0] or {"utterance": "...", "end": True}
        conv.turns.append((a.name, turn["utterance"]))
        self.events.log(now, a.name, f"says to {other}", conv.place, utterance=turn["utterance"])
        conv.next_speaker = other
        if turn["end"] or len(conv.turns) >= prompts.MAX_TURNS:
            yield from self._end_conversation(conv, now)

    def _end_conversation(self: Simulation, conv: Conversation, now: datetime) -> Generator[Ask, Any, None]:
        conv.ended = True  # the other side must not speak while the summaries are written
        dialogue = prompts.dialogue_lines(conv.turns)
        sides = [conv.a, conv.b]
        summaries = yield Ask(prompts.SUMMARY_PURPOSE,
                              [prompts.summary_messages(conv.a, conv.b, n, dialogue) for n in sides], parse_summary)
        for name, summary in zip(sides, summaries, strict=True):
            other = conv.other(name)
            self.write(name, f"Conversation with {other}:\n{dialogue}", DIALOGUE, 4, now, with_=other)
            self.write(name, summary or f"{name} talked with {other}", DIALOGUE, 5, now, with_=other, summary=True)
            agent = self.agents[name]
            agent.cooldown[other] = now.timestamp() + CHAT_COOLDOWN_S
            del self.conversations[name]
        self.events.log(now, conv.a, f"ends the conversation with {conv.b}", conv.place)

"""Perception: what an agent notices near it (other agents and object states within its vision
radius in its area), at most ``ATTENTION`` new things a step, written as rated observations.

Owns each agent's :class:`~memstream.sim.agents.agent.Senses`. An observation identical to the one the
agent holds for the same thing is not written again, and an agent looks again only when
something near it changed (the scene's versions).
"""

from __future__ import annotations

from datetime import datetime

from memstream.models import Stage, concurrently
from memstream.offline_text import doing
from memstream.sim.agents.agent import Agent
from memstream.sim.agents.movement import Movement
from memstream.sim.agents.objects import Objects
from memstream.sim.agents.poignancy import PoignancyTally
from memstream.sim.town.scene import Scene
from memstream.stream import OBSERVATION, MemoryStream, importance_stage, new_memory
from memstream.trust import Checker

#: An observation's provenance, as the gate is told it.
PERCEIVED = "perceived"

#: New things an agent takes in per step (the reference implementation's attention bandwidth).
ATTENTION = 3
SEEN_CHARS = 120             # what an agent notes of another's activity


class Perception:
    def __init__(self, agents: dict[str, Agent], movement: Movement, objects: Objects, scene: Scene,
                 stream: MemoryStream, vision_radius: float, checker: Checker | None = None,
                 poignancy: PoignancyTally | None = None) -> None:
        self.agents, self.movement, self.objects, self.scene, self.stream = agents, movement, objects, scene, stream
        self.poignancy = poignancy if poignancy is not None else PoignancyTally()
        self.checker = checker or Checker.off()
        self.nearby = movement.map.within(vision_radius)

    def perceive(self, a: Agent, now: datetime) -> Stage[tuple[int, str] | None]:
        """Write what is new nearby (each text past the write gate, asked beside its rating); the most
        poignant ``(importance, text)`` written, if any. A blocked one is seen (not checked again) but not kept."""
        new = self.look(a)
        if not new:
            return None
        texts = [text for _, text in new]
        verdicts, ratings = yield from concurrently([
            self.checker.gate_stage(a.name, texts, what="observation", sources=[PERCEIVED] * len(new),
                                    at=now.isoformat()),
            importance_stage(texts)])
        kept = []
        for (key, text), verdict, importance in zip(new, verdicts, ratings, strict=True):
            a.senses.seen[key] = text
            if verdict.allowed:
                self.stream.write(new_memory(owner=a.name, text=text, kind=OBSERVATION, created_at=now,
                                             importance=importance, metadata={"about": key}))
                self.poignancy.add(importance)
                kept.append((importance, text))
        if not kept:
            return None
        a.senses.perceived_since_check = True
        return max(kept)

    def look(self, a: Agent) -> list[tuple[str, str]]:
        """New observations about what is near (at most ATTENTION), skipping any already held."""
        places = self.nearby[a.body.location]
        versions = tuple(self.scene.version(p) for p in places)
        senses = a.senses
        if versions == senses.perceived:
            return []
        new: list[tuple[str, str]] = []
        for place in places:
            for other in (n for n in self.movement.occupants(place) if n != a.name):
                text = doing(other, self.agents[other].mind.block_activity)[:SEEN_CHARS]
                if senses.seen.get(other) != text:
                    new.append((other, text))
            for key, text in self.objects.visible(place):
                if senses.seen.get(key) != text:
                    new.append((key, text))
        if len(new) <= ATTENTION:
            senses.perceived = versions  # everything near has been taken in
        return new[:ATTENTION]

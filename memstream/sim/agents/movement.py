"""Movement: who is in which building, and walking along the town's paths toward a place.

Owns each agent's :class:`~memstream.sim.agents.agent.Body`. An agent on its way stays in the building
it is leaving until it has walked the distance to the next one on its route.
"""

from __future__ import annotations

from collections import defaultdict

from memstream.sim.agents.agent import Agent
from memstream.sim.town.scene import Scene
from memstream.sim.town.world import Map, Town


class Movement:
    def __init__(self, town: Town, agents: dict[str, Agent], scene: Scene) -> None:
        self.map, self.walk_speed, self.agents, self.scene = Map(town), town.walk_speed, agents, scene
        self._at: dict[str, set[str]] = defaultdict(set)  # building -> agents there (arrived or leaving)
        self.index()

    def index(self) -> None:
        """Where everyone is, from their bodies (after a restore)."""
        self._at.clear()
        for name, a in self.agents.items():
            self._at[a.body.location].add(name)

    def occupants(self, place: str) -> list[str]:
        """The agents in ``place`` and not on their way out, in name order."""
        return sorted(n for n in self._at[place] if not self.agents[n].body.route)

    def present(self, building: str) -> list[Agent]:
        """The agents in ``building`` and not on their way out (in no set order)."""
        return [self.agents[n] for n in self._at[building] if not self.agents[n].body.route]

    def walk(self, a: Agent, target: str) -> bool:
        """One step along the route to ``target``; True if the agent reached a new building."""
        body = a.body
        if body.location == target and not body.route:
            return False
        if not body.route or body.route[-1] != target:
            body.route, body.progress = self.map.route(body.location, target)[1:], 0.0
            if not body.route:
                return False
        body.progress += self.walk_speed
        moved = False
        while body.route and body.progress >= self.map.distance(body.location, body.route[0]):
            body.progress -= self.map.distance(body.location, body.route[0])
            self.scene.changed(body.location)
            self._at[body.location].discard(a.name)
            body.location = body.route.pop(0)
            self._at[body.location].add(a.name)
            self.scene.changed(body.location)
            moved = True
        if not body.route:
            body.progress = 0.0
        return moved

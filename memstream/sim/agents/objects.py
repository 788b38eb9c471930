"""Objects: a thing is in use while an occupant of its building is doing something that names one
of its uses ("cooking" turns the stove on), and idle otherwise.

Only the buildings stirred this step (someone arrived, left, or changed activity) are looked at,
in the town's order: looking at every object every step was quadratic in effect, as a larger
town has more of both agents and objects.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from memstream.sim.agents.movement import Movement
from memstream.sim.events import EventLog
from memstream.sim.state import Stateful
from memstream.sim.town.scene import Scene
from memstream.sim.town.world import Thing, Town


@dataclass
class ObjectStates(Stateful):
    objects: dict[str, str] = field(default_factory=dict)  # "building/room/object" -> state


class Objects:
    def __init__(self, town: Town, movement: Movement, scene: Scene, events: EventLog) -> None:
        self.movement, self.scene, self.events = movement, scene, events
        self.state = ObjectStates()
        things = [(b.name, f"{b.name}/{r.name}/{t.name}", t)  # every object, in the town's order
                  for a in town.areas for b in a.buildings for r in b.rooms for t in r.objects]
        self.seen_at: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # building -> (key, room, name)
        for building, key, thing in sorted(things, key=lambda x: x[1]):
            self.seen_at[building].append((key, key.split("/")[1], thing.name))
        self.things_in: dict[str, list[tuple[str, Thing]]] = defaultdict(list)  # building -> (key, thing), in order
        for building, key, thing in things:
            self.things_in[building].append((key, thing))
        self.town_order = {name: i for i, name in enumerate(movement.map.buildings)}
        self.scene.stir(*self.things_in)

    def visible(self, building: str) -> list[tuple[str, str]]:
        """``(key, what an onlooker notes)`` of the objects in ``building`` that have a state yet."""
        states = self.state.objects
        return [(key, f"the {thing} in the {room} of {building} is {states[key]}")
                for key, room, thing in self.seen_at.get(building, ()) if key in states]

    def update(self, now: datetime) -> None:
        """Each stirred building's objects in use or idle, by what its occupants are doing."""
        states = self.state.objects
        for building in sorted(self.scene.take_stirred() & self.things_in.keys(), key=self.town_order.__getitem__):
            acts = [a.mind.activity.lower() for a in self.movement.present(building)]
            for key, thing in self.things_in[building]:
                used = any(u in act for act in acts for u in thing.uses)
                state = thing.active if used else thing.idle
                if states.get(key, thing.idle) != state:
                    self.scene.changed(building)
                    self.events.log(now, "", f"the {thing.name} is {state}", building)
                states[key] = state

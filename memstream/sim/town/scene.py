"""What can be seen where, and when it last changed: the one piece of world state that movement,
acting, objects and perception all touch.

Every visible change in a building (someone arrives or leaves, changes what they are doing, an
object changes state) bumps the building's version; an agent looks again only when the versions
of the places near it differ from those at its last look. Buildings where someone arrived, left
or changed activity are "stirred": only their objects can change state this step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memstream.sim.state import Stateful


@dataclass
class Scene(Stateful):
    versions: dict[str, int] = field(default_factory=dict)   # building -> bumps on any visible change
    stirred: set[str] = field(default_factory=set, metadata={"state": False})  # objects may change state here

    def changed(self, building: str) -> None:
        self.versions[building] = self.versions.get(building, 0) + 1

    def version(self, building: str) -> int:
        return self.versions.get(building, 0)

    def stir(self, *buildings: str) -> None:
        self.stirred.update(buildings)

    def take_stirred(self) -> set[str]:
        """The buildings stirred since the last call (the set starts empty again)."""
        stirred, self.stirred = self.stirred, set()
        return stirred

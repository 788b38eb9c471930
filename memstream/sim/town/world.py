"""The town: nested places (town > area > building > room > object), paths, residents.

Loaded from YAML or JSON through a pydantic schema, so a bad file gets one clear
line. Agents stand in buildings; a building has a position, and two agents see
each other when they are in the same area within the vision radius. Objects have a
state ("the stove is on") that agents change by using them.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from memstream.files import Number, read_model
from memstream.offline_text import content_words
from memstream.planning import Identity

IDLE = "idle"
#: The line of a resident's description that lists the places it knows (the prompt asks for locations among them).
PLACES_LABEL = "Places known (a location must be one of these)"
#: The least vision radius and walking speed a town may give (town units; the bundled town's are 0.5
#: and 0.1): below it, neighbours are sought on a grid of absurdly many cells (a radius near zero
#: overflowed it) and nobody ever arrives anywhere.
MIN_DISTANCE = 1e-3


class Thing(BaseModel):
    """An object in a room; it shows ``active`` while someone's activity uses it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    uses: list[str] = Field(default_factory=list)
    active: str = "in use"
    idle: str = IDLE


class Room(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    objects: list[Thing] = Field(default_factory=list)


class Building(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field(min_length=1)
    x: Number = Field(ge=-1e6, le=1e6)
    y: Number = Field(ge=-1e6, le=1e6)
    rooms: list[Room] = Field(default_factory=lambda: [Room(name="main room")])


class Area(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    buildings: list[Building] = Field(min_length=1)


class Resident(Identity):
    """An identity whose home and workplace are buildings of the town; in a simulation, with the places it
    knows (set by spatial memory, :mod:`memstream.sim.agents.spatial`), which its description lists."""

    _places: str = PrivateAttr(default="")
    _known: tuple[str, ...] = PrivateAttr(default=())

    @property
    def places(self) -> str:
        return self._places

    @places.setter
    def places(self, listing: str) -> None:
        self._places = listing

    def know(self, names: Collection[str]) -> None:
        """The buildings this resident knows (spatial memory's): its plans' places are checked against them."""
        self._known = tuple(names)

    def known_places(self) -> tuple[str, ...]:
        return self._known

    def describe(self) -> str:
        described = super().describe()
        return f"{described}\n{PLACES_LABEL}: {self._places}" if self._places else described


class Town(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field(min_length=1)
    vision_radius: Number = Field(default=3.0, ge=MIN_DISTANCE, le=1e6)
    walk_speed: Number = Field(default=0.1, ge=MIN_DISTANCE, le=1e6, description="distance units per 10 s step")
    areas: list[Area] = Field(min_length=1)
    paths: list[tuple[str, str]] = Field(default_factory=list)
    residents: list[Resident] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Town:
        names = [b.name for a in self.areas for b in a.buildings]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"building names must be unique; repeated: {sorted(dupes)}")
        known = set(names)
        for a, b in self.paths:
            for end in (a, b):
                if end not in known:
                    raise ValueError(f"path end {end!r} is not a building")
        people = [r.name for r in self.residents]
        if len(set(people)) != len(people):
            raise ValueError("resident names must be unique")
        for r in self.residents:
            for field_name in ("home", "workplace"):
                value = getattr(r, field_name)
                if value and value not in known:
                    raise ValueError(f"{r.name}'s {field_name} {value!r} is not a building")
        return self


def load_town(path: str | Path) -> Town:
    return read_model(path, Town, "town")


def default_town_path() -> Path:
    return Path(__file__).parents[1] / "data" / "smallville.yaml"


class Map:
    """Positions, areas and shortest walking routes between the town's buildings."""

    def __init__(self, town: Town) -> None:
        self.town = town
        self.buildings: dict[str, Building] = {b.name: b for a in town.areas for b in a.buildings}
        self.area_of: dict[str, str] = {b.name: a.name for a in town.areas for b in a.buildings}
        self.neighbours: dict[str, list[tuple[str, float]]] = {n: [] for n in self.buildings}
        edges = list(town.paths) or self._default_paths()
        for a, b in edges:
            d = self.distance(a, b)
            self.neighbours[a].append((b, d))
            self.neighbours[b].append((a, d))
        self._routes: dict[tuple[str, str], list[str]] = {}
        self._resolved: dict[tuple[str, str], str] = {}

    def _default_paths(self) -> list[tuple[str, str]]:
        """Without explicit paths, every building is reachable from every other directly."""
        names = sorted(self.buildings)
        return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]

    def within(self, radius: float) -> dict[str, list[str]]:
        """For every building, the buildings of its area within ``radius`` (itself included), by name.

        Buildings are put in a grid of ``radius``-sized cells, so each looks only at its own cell and
        the eight around it: linear in the number of buildings, where comparing all pairs was quadratic
        (seconds for a town of 10,000 residents).
        """
        cells: dict[tuple[str, int, int], list[str]] = {}
        for name, b in self.buildings.items():
            cells.setdefault((self.area_of[name], math.floor(b.x / radius), math.floor(b.y / radius)), []).append(name)
        out = {}
        for name, b in self.buildings.items():
            area, cx, cy = self.area_of[name], math.floor(b.x / radius), math.floor(b.y / radius)
            near = [o for dx in (-1, 0, 1) for dy in (-1, 0, 1) for o in cells.get((area, cx + dx, cy + dy), ())
                    if self.distance(name, o) <= radius]
            out[name] = sorted(near)
        return out

    def distance(self, a: str, b: str) -> float:
        pa, pb = self.buildings[a], self.buildings[b]
        return math.hypot(pa.x - pb.x, pa.y - pb.y)

    def route(self, start: str, goal: str) -> list[str]:
        """Buildings passed from ``start`` to ``goal`` (Dijkstra; both ends included)."""
        key = (start, goal)
        if key not in self._routes:
            best = {start: 0.0}
            previous: dict[str, str] = {}
            queue = [(0.0, start)]
            while queue:
                d, here = heapq.heappop(queue)
                if here == goal:
                    break
                if d > best.get(here, math.inf):
                    continue
                for there, step in sorted(self.neighbours[here]):
                    nd = d + step
                    if nd < best.get(there, math.inf):
                        best[there], previous[there] = nd, here
                        heapq.heappush(queue, (nd, there))
            if goal not in best:
                self._routes[key] = [start]  # unreachable: stay
            else:
                path = [goal]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                self._routes[key] = path[::-1]
        return self._routes[key]

    def resolve(self, place: str, fallback: str) -> str:
        """A plan's location name as a building of this town (case-insensitive, by words), else ``fallback``.

        Remembered: every awake agent resolves its action's place every step, and a name that is not
        a building's exactly is matched against every building (thousands in a large town).
        """
        if place in self.buildings:
            return place
        key = (place, fallback)
        if key not in self._resolved:
            self._resolved[key] = self._match(place, fallback)
        return self._resolved[key]

    def resolve_among(self, place: str, names: Collection[str], fallback: str) -> str:
        """As :meth:`resolve`, among ``names`` only (the buildings an agent knows), not remembered."""
        return place if place in names else self._match(place, fallback, sorted(names))

    def _match(self, place: str, fallback: str, among: list[str] | None = None) -> str:
        """The building named in ``place`` (the longest name it holds: "house 12 kitchen" is house 12,
        not house 1), else the one whose name holds ``place``, else the most words in common."""
        wanted = place.lower()
        buildings = self.buildings if among is None else among
        inside = [name for name in buildings if name.lower() in wanted]
        if inside:
            return max(inside, key=lambda name: (len(name), name))
        holding = sorted(name for name in buildings if wanted in name.lower())
        if holding:
            return min(holding, key=len)
        words = set(content_words(wanted))
        scored = [(len(words & set(content_words(n))), n) for n in sorted(buildings)]
        hits, name = max(scored) if scored else (0, fallback)
        return name if hits else fallback

"""Spatial memory: the places each agent knows, and plans kept to them (owns each agent's
:class:`~memstream.sim.agents.agent.Places`).

As in the paper (section 4.3.1 and the reference code's spatial memory tree), an agent knows the
town only as far as it has been there, seen it or been told of it: it starts knowing its home,
its workplace and the places its routine names (and what it sees from home); it comes to know a
building by walking to it or past it (``been`` when it stops there, ``seen`` when it passes or sees
it from where it stands), and by hearing it named (in a conversation, or a whisper: ``told``).
Each new piece of knowledge is a memory of its own (kind ``observation``, metadata ``place``, the
paper's mundane importance, no model call) and a branch of a tree the agent can list (areas ->
buildings -> rooms -> objects: a building's rooms and objects are known once the agent has been
inside).

Every prompt that shows the agent's identity lists the places it knows (the reference code prompts
the place choice with the known areas only), and a plan's, reaction's or appointment's place is
resolved among them: a place the agent does not know is matched to a known one by its words, else
the agent stays where it would have stayed (:meth:`Spatial.resolve`). Ablated (``--ablate spatial``),
every agent knows the whole town, as before.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TypedDict

from memstream.sim.agents.agent import Agent
from memstream.sim.town.world import Map, Town
from memstream.stream import OBSERVATION, MemoryStream, new_memory

#: How an agent came to know a place, the best first: a better way replaces a worse, never the reverse.
BEEN, SEEN, TOLD = "been", "seen", "told"
HOW = (BEEN, SEEN, TOLD)
#: The importance of a place memory (written without asking the model): the paper's anchor for the mundane.
PLACE_IMPORTANCE = 1
#: Known places a prompt lists at most (the nearest to the agent's home first): a prompt stays short in a big town.
SHOWN = 40


class Spatial:
    """Who knows which places; what a plan's place means to the agent that made it."""

    def __init__(self, town: Town, agents: dict[str, Agent], map_: Map, nearby: dict[str, list[str]],
                 stream: MemoryStream, ablate: frozenset[str]) -> None:
        self.town, self.agents, self.map, self.nearby, self.stream = town, agents, map_, nearby, stream
        self.on = "spatial" not in ablate
        self.remembers = "observation" not in ablate  # without observation nothing learned is written
        names = sorted(map_.buildings, key=len, reverse=True)
        self._named = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in names) + r")(?!\w)", re.I)
        self._by_lower = {n.lower(): n for n in names}
        self._among: dict[str, dict[str, str]] = {}  # agent -> place named -> known building (until it learns)

    # -- learning --------------------------------------------------------------------------------

    def start(self, a: Agent, now: datetime) -> None:
        """What the agent knows at the start: home and workplace (been), its routine's places (been),
        and what it sees from home."""
        r = a.resident
        places = [r.home, r.workplace, *(self.map.resolve(item.location, "") for item in r.routine)]
        for place in dict.fromkeys(p for p in places if p in self.map.buildings):
            self.learn(a, place, BEEN, now)
        self.arrive(a, now, inside=True)

    def arrive(self, a: Agent, now: datetime, *, inside: bool) -> None:
        """The agent stands in its building (``inside``: it stopped there; else it passes through), and sees
        the buildings within its vision."""
        here = a.body.location
        self.learn(a, here, BEEN if inside else SEEN, now)
        for place in self.nearby.get(here, ()):
            self.learn(a, place, SEEN, now)

    def hear(self, a: Agent, text: str, now: datetime) -> None:
        """The places ``text`` names (case-insensitive, whole names) become known to the agent, as told."""
        if not self.on:
            return
        for found in dict.fromkeys(m.group(0).lower() for m in self._named.finditer(text)):
            self.learn(a, self._by_lower[found], TOLD, now)

    def learn(self, a: Agent, place: str, how: str, now: datetime) -> None:
        """``place`` known to the agent by ``how``, if that is news (unknown, or known a worse way)."""
        known = a.places.known
        if not self.on or (place in known and HOW.index(known[place]) <= HOW.index(how)):
            return
        first = place not in known
        known[place] = how
        self._among.pop(a.name, None)
        if first:
            a.places.listing = self.listing(a)
        if self.remembers:
            self.stream.write(new_memory(owner=a.name, text=self._text(a.name, place, how), kind=OBSERVATION,
                                         created_at=now, importance=PLACE_IMPORTANCE,
                                         metadata={"place": place, "how": how}))

    def _text(self, name: str, place: str, how: str) -> str:
        where = f"{place} ({self.map.area_of[place]})"
        if how == BEEN:
            rooms = self.map.buildings[place].rooms
            return f"{name} has been in {where}; its rooms: " + "; ".join(
                r.name + (f" ({', '.join(t.name for t in r.objects)})" if r.objects else "") for r in rooms)
        return f"{name} has seen {where}" if how == SEEN else f"{name} has heard of {where}"

    # -- using it --------------------------------------------------------------------------------

    def listing(self, a: Agent) -> str:
        """The places the agent knows, by area (the town's order), the ``SHOWN`` nearest its home."""
        known = a.places.known
        if not known:
            return ""
        home = a.resident.home if a.resident.home in self.map.buildings else a.body.location
        shown = set(sorted(known, key=lambda p: (self.map.distance(home, p), p))[:SHOWN])
        areas = [f"{area.name}: " + ", ".join(b.name for b in area.buildings if b.name in shown)
                 for area in self.town.areas if any(b.name in shown for b in area.buildings)]
        return "; ".join(areas)

    def resolve(self, a: Agent, place: str, fallback: str) -> str:
        """A plan's place as a building the agent knows: the town's building it names if known, else the known
        building that shares most words with it, else ``fallback`` (home, or where it stands)."""
        building = self.map.resolve(place, fallback)
        known = a.places.known
        if not self.on or building == fallback or building in known:
            return building
        among = self._among.setdefault(a.name, {})
        if place not in among:
            among[place] = self.map.resolve_among(place, known, fallback)
        return among[place]

    def reindex(self) -> None:
        """The prompts' listings again, after a restore (they are derived, not checkpointed)."""
        self._among.clear()
        for a in self.agents.values():
            a.places.listing = self.listing(a)


class KnownRoom(TypedDict):
    """A room of a building the agent has been in, with its objects."""

    name: str
    objects: list[str]


class KnownBuilding(TypedDict):
    """A building the agent knows, how it knows it (been, seen, told), and its rooms if it has been in."""

    name: str
    how: str
    rooms: list[KnownRoom]


class KnownArea(TypedDict):
    """An area of the place tree (``memstream replay --places``, dumped to JSON as is)."""

    area: str
    buildings: list[KnownBuilding]


def place_tree(town: Town, known: dict[str, str]) -> list[KnownArea]:
    """The places of ``known`` (building -> how) as the paper's tree: areas -> buildings (how each is
    known) -> rooms -> objects, the rooms and objects only of the buildings the agent has been in."""
    tree: list[KnownArea] = []
    for area in town.areas:
        buildings: list[KnownBuilding] = [{"name": b.name, "how": known[b.name],
                      "rooms": [{"name": r.name, "objects": [t.name for t in r.objects]} for r in b.rooms]
                      if known[b.name] == BEEN else []}
                     for b in area.buildings if b.name in known]
        if buildings:
            tree.append({"area": area.name, "buildings": buildings})
    return tree


def place_lines(tree: list[KnownArea]) -> list[str]:
    """The tree as indented lines for a terminal."""
    lines = []
    for area in tree:
        lines.append(area["area"])
        for b in area["buildings"]:
            lines.append(f"  {b['name']} ({b['how']})")
            lines += [f"    {r['name']}" + (f": {', '.join(r['objects'])}" if r["objects"] else "") for r in b["rooms"]]
    return lines

"""One agent of the simulation: who it is, and the typed state each component keeps of it.

An agent's state is split by the component that owns it (Concordia builds entities from
components the same way): its ``body`` (where it is and where it is going: movement), its
``senses`` (what it has seen: perception), its ``mind`` (its plan and what it is doing:
planning and acting) and its ``social`` side (conversation cooldowns, what it said to whom, its offers). Each is a
:class:`~memstream.sim.state.Stateful` dataclass, so a checkpoint holds it and a resumed run
continues from exactly the same state, with no key listed by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memstream.planning import SLEEPING, DayPlan
from memstream.sim.state import Stateful
from memstream.sim.town.world import Resident


@dataclass
class Conversation(Stateful):
    a: str
    b: str
    turns: list[tuple[str, str]] = field(default_factory=list)
    next_speaker: str = field(default="", metadata={"key": "next"})
    place: str = ""
    relationships: dict[str, str] = field(default_factory=dict)  # speaker -> its summary of the other, from memory
    purpose: str = ""  # what the one who started it came to tell (a visit: memstream.sim.talk.visits), else ""
    ended: bool = field(default=False, metadata={"state": False})  # set while its memories are written

    def other(self, name: str) -> str:
        return self.b if name == self.a else self.a


@dataclass
class Body(Stateful):
    """Where the agent is (movement's)."""

    location: str
    route: list[str] = field(default_factory=list)  # buildings still to pass, the next first
    progress: float = 0.0                             # distance walked toward route[0]


@dataclass
class Senses(Stateful):
    """What the agent has taken in (perception's)."""

    seen: dict[str, str] = field(default_factory=dict)  # thing -> the observation last written about it
    perceived: tuple[int, ...] = ()                     # versions of the nearby places at the last look
    perceived_since_check: bool = False                 # wrote observations since the reflection trigger was read


@dataclass
class Mind(Stateful):
    """The agent's plan and what it is doing (planning and acting's)."""

    plan: DayPlan | None = None
    activity: str = SLEEPING                          # the action under way
    block_activity: str = SLEEPING                    # the hour block's activity (what others see)
    next_react_s: float = 0.0                         # no re-planning before this (epoch s)
    currently: str = ""                               # the situation as revised this morning ("" = the town's)
    heard: list[int] = field(default_factory=list)    # ids of the whispers it has heard


#: Lines said to one other agent that are kept (the newest): enough to tell what it has heard already.
MAX_SAID = 40


@dataclass
class Talked(Stateful):
    """The agent's last conversation with one other agent, and what it has said to it in any of them: an
    offer says how they last talked, and tells apart what the other has heard already."""

    at: float = 0.0                                  # when the last conversation ended (epoch s)
    lines: int = 0                                   # lines said in it, by both
    memo: str = ""                                   # how it went: the agent's memo of it ("" if none was kept)
    said: list[str] = field(default_factory=list)    # what the agent said to the other, oldest first (MAX_SAID)


@dataclass
class Offers(Stateful):
    """The conversations the agent offered and what came of them (``metrics.json``'s conversation_offers)."""

    made: int = 0
    accepted: int = 0
    declined: int = 0
    busy: int = 0  # the other got into a conversation before the answer came back


@dataclass
class Visit(Stateful):
    """A visit of the day plan to tell ``persons`` at ``place`` the news ``news`` (memory ``memory``), in
    ``[start, end)`` (epoch s); those told are taken off ``persons`` (:mod:`memstream.sim.talk.visits`)."""

    start: float
    end: float
    place: str
    persons: list[str]
    news: str
    memory: int = 0


@dataclass
class Social(Stateful):
    """Whom the agent may talk with and when, what it knows of its talks with each, and its offers
    (conversations'). A checkpoint from before ``last_talks`` and ``offers`` restores them empty."""

    cooldown: dict[str, float] = field(default_factory=dict)  # other -> no new conversation before (epoch s)
    next_chat_s: float = 0.0                                   # no conversation offered before this (epoch s)
    known: dict[str, Talked] = field(default_factory=dict, metadata={"key": "last_talks"})  # other -> last talk
    offers: Offers = field(default_factory=Offers)
    visits: list[Visit] = field(default_factory=list)  # today's visits to tell news (a new plan, new visits)

    def talked(self, other: str, at: float, said: list[str], lines: int) -> Talked:
        """Note a conversation with ``other`` that ended at ``at``, in which the agent said ``said``."""
        before = self.known.get(other, Talked())
        self.known[other] = Talked(at=at, lines=lines, said=(before.said + said)[-MAX_SAID:])
        return self.known[other]


@dataclass
class Places(Stateful):
    """The places the agent knows and how it came to (spatial memory's, :mod:`memstream.sim.agents.spatial`)."""

    known: dict[str, str] = field(default_factory=dict, metadata={"key": "places"})  # building -> been/seen/told
    listing: str = field(default="", metadata={"state": False})  # as its prompts show them (derived from known)


@dataclass
class Agent:
    resident: Resident
    body: Body
    senses: Senses = field(default_factory=Senses)
    mind: Mind = field(default_factory=Mind)
    social: Social = field(default_factory=Social)
    places: Places = field(default_factory=Places)
    _identity: Resident | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.resident.name

    @property
    def where(self) -> str:
        """Where the event log puts the agent: its building, or "on the way to" the end of its route."""
        return f"on the way to {self.body.route[-1]}" if self.body.route else self.body.location

    @property
    def identity(self) -> Resident:
        """Who the agent is today: the town's resident, its situation as revised at wake-up, the places it
        knows (which its prompts list)."""
        currently, listing, known = self.mind.currently, self.places.listing, self.places.known
        me = self._identity
        if (me is None or me.situation != (currently or self.resident.situation) or me.places != listing
                or len(me.known_places()) != len(known)):  # places are only ever learned, never forgotten
            me = self.resident.model_copy(update={"situation": currently} if currently else {})
            me.places = listing
            me.know(known)
            self._identity = me
        return me

    @staticmethod
    def state_problem(state: Any) -> str | None:
        """What keeps an agent's checkpointed record from restoring it (see :meth:`Stateful.state_problem`)."""
        if not isinstance(state, dict) or not isinstance(state.get("name"), str):
            return "an agent's state has no name"
        return next((p for part in (Body, Senses, Mind, Social, Places) if (p := part.state_problem(state))), None)

    def components(self) -> tuple[Stateful, ...]:
        return self.body, self.senses, self.mind, self.social, self.places

    def get_state(self) -> dict[str, Any]:
        """One flat record: the name, then every component's fields."""
        state: dict[str, Any] = {"name": self.name}
        for part in self.components():
            state.update(part.get_state())
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        for part in self.components():
            part.set_state(state)

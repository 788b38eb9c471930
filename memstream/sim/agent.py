"""One agent of the simulation: its identity, where it is, what it does, what it has seen.

Plain data with ``get_state``/``set_state``, so a checkpoint can hold it and a resumed
run continues from exactly the same state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memstream.planning import DayPlan
from memstream.planning.plan import SLEEPING
from memstream.sim.world import Resident


@dataclass
class Conversation:
    a: str
    b: str
    turns: list[tuple[str, str]] = field(default_factory=list)
    next_speaker: str = ""
    place: str = ""
    ended: bool = False
    relationships: dict[str, str] = field(default_factory=dict)  # speaker -> its summary of the other, from memory

    def other(self, name: str) -> str:
        return self.b if name == self.a else self.a


@dataclass
class Agent:
    resident: Resident
    location: str
    route: list[str] = field(default_factory=list)  # buildings still to pass, the next first
    progress: float = 0.0                             # distance walked toward route[0]
    plan: DayPlan | None = None
    activity: str = SLEEPING                          # the action under way
    block_activity: str = SLEEPING                    # the hour block's activity (what others see)
    seen: dict[str, str] = field(default_factory=dict)  # thing -> the observation last written about it
    cooldown: dict[str, float] = field(default_factory=dict)  # other -> no new conversation before (epoch s)
    next_chat_s: float = 0.0                          # no conversation offered before this (epoch s)
    next_react_s: float = 0.0                         # no re-planning before this (epoch s)
    perceived_since_check: bool = False               # wrote observations since the reflection trigger was read
    perceived: tuple[int, ...] = ()                   # versions of the nearby places at the last look
    currently: str = ""                               # the situation as revised this morning ("" = the town's)
    heard: list[int] = field(default_factory=list)    # ids of the whispers it has heard
    _identity: Resident | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.resident.name

    @property
    def where(self) -> str:
        """Where the event log puts the agent: its building, or "on the way to" the end of its route."""
        return f"on the way to {self.route[-1]}" if self.route else self.location

    @property
    def identity(self) -> Resident:
        """Who the agent is today: the town's resident, its situation as revised at wake-up."""
        if self._identity is None or self._identity.situation != (self.currently or self.resident.situation):
            self._identity = (self.resident.model_copy(update={"situation": self.currently}) if self.currently
                              else self.resident)
        return self._identity

    def get_state(self) -> dict[str, Any]:
        return {"name": self.name, "location": self.location, "route": self.route, "progress": self.progress,
                "plan": self.plan.to_dict() if self.plan else None, "activity": self.activity,
                "block_activity": self.block_activity, "seen": self.seen, "cooldown": self.cooldown,
                "next_chat_s": self.next_chat_s, "next_react_s": self.next_react_s,
                "perceived_since_check": self.perceived_since_check,
                "perceived": list(self.perceived), "currently": self.currently,
                "heard": self.heard}

    def set_state(self, state: dict[str, Any]) -> None:
        self.location, self.route, self.progress = state["location"], list(state["route"]), state["progress"]
        self.plan = DayPlan.from_dict(state["plan"]) if state["plan"] else None
        self.activity, self.block_activity = state["activity"], state["block_activity"]
        self.seen, self.cooldown = dict(state["seen"]), dict(state["cooldown"])
        self.next_chat_s, self.next_react_s = state["next_chat_s"], state["next_react_s"]
        self.perceived_since_check = state["perceived_since_check"]
        self.perceived = tuple(state["perceived"])
        self.currently = state.get("currently", "")
        self.heard = list(state.get("heard", []))

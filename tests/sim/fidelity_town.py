"""The fidelity scenarios' small town (tests/fixtures/fidelity/town.yaml) run offline: what each
resident is told before the run starts, then a few simulated hours."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from memstream.models import HashEmbedder, OfflineChatModel
from memstream.planning import Identity
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog
from memstream.sim.town.world import Resident, load_town
from memstream.stream import DIALOGUE, THOUGHT, MemoryStream
from tests.helpers import FIXTURES

TOWN = FIXTURES / "fidelity" / "town.yaml"
TZ = timezone(timedelta(hours=-5))
#: Monday 4 March 2024, 06:00: everyone wakes.
START = datetime(2024, 3, 4, 6, tzinfo=TZ)
PETRA, TOMAS, GRETA, IDRIS = "Petra Novak", "Tomas Reyes", "Greta Holm", "Idris Okafor"


def residents(*names: str) -> list[Resident]:
    town = load_town(TOWN)
    return [r for r in town.residents if r.name in names]


def identity(name: str) -> Identity:
    return residents(name)[0]


def told(stream: MemoryStream, owner: str, texts: list[str], at: datetime, importance: int = 7) -> None:
    """``owner`` remembers ``texts`` (thoughts, a minute apart from ``at``), as if told before."""
    for i, text in enumerate(texts):
        stream.add(owner, text, at=at + timedelta(minutes=i), importance=importance, kind=THOUGHT)


def run(names: list[str], hours: float, stream: MemoryStream | None = None,
        start: datetime = START) -> tuple[Simulation, MemoryStream]:
    stream = stream or fresh_stream()
    sim = Simulation(load_town(TOWN), residents(*names), stream, OfflineChatModel(), EventLog(None), start=start)
    sim.run(start + timedelta(hours=hours))
    return sim, stream


def fresh_stream() -> MemoryStream:
    return MemoryStream(":memory:", HashEmbedder(256))


def heard(stream: MemoryStream, owner: str) -> list[str]:
    """What ``owner`` was told in conversations (its dialogues and memos)."""
    return [m.text for m in stream.memories(owner) if m.kind == DIALOGUE or m.metadata.get("memo")]


def planning_thoughts(stream: MemoryStream, owner: str) -> list[str]:
    return [m.text for m in stream.memories(owner) if m.metadata.get("planning")]

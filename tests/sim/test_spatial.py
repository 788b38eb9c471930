"""Spatial memory: agents know the places they have been, seen or been told of, and plan among them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.sim import RunConfig, start_run
from memstream.sim.agents.spatial import BEEN, SEEN, TOLD
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog
from memstream.sim.town.world import PLACES_LABEL, default_town_path, load_town
from memstream.stream import MemoryStream

START = datetime(2023, 2, 13, 6, tzinfo=timezone(timedelta(hours=-8)))
TOWN = load_town(default_town_path())
BUILDINGS = sorted(b.name for a in TOWN.areas for b in a.buildings)


def _sim(ablate: frozenset[str] = frozenset(), n: int = 6) -> Simulation:
    stream = MemoryStream(":memory:", HashEmbedder(64))
    sim = Simulation(TOWN, TOWN.residents[:n], stream, OfflineChatModel(), EventLog(None), start=START,
                     ablate=ablate)
    sim.seed_memories()
    return sim


def _stranger(sim: Simulation) -> tuple[str, str]:
    """An agent of ``sim`` and a building it does not know."""
    for name in sim.order:
        unknown = [b for b in BUILDINGS if b not in sim.agents[name].places.known]
        if unknown:
            return name, unknown[0]
    raise AssertionError("everyone knows every place")


def test_an_agent_starts_knowing_home_work_and_its_routine_not_the_whole_town() -> None:
    sim = _sim()
    for name in sim.order:
        r, known = sim.agents[name].resident, sim.agents[name].places.known
        assert known[r.home] == BEEN and (not r.workplace or known[r.workplace] == BEEN)
        routine = {sim.movement.map.resolve(item.location, "") for item in r.routine} & set(BUILDINGS)
        assert all(known[p] == BEEN for p in routine)
        assert len(known) < len(BUILDINGS)
        places = [m for m in sim.stream.memories(name) if "place" in m.metadata]
        assert {m.metadata["place"] for m in places} == set(known)  # each known place is a memory


def test_a_place_named_to_an_agent_becomes_known_as_told_and_is_remembered() -> None:
    sim = _sim()
    name, place = _stranger(sim)
    a = sim.agents[name]
    assert place not in a.identity.describe()
    sim.spatial.hear(a, f"Did you hear? There is a talk at {place.upper()} tonight", START)
    assert a.places.known[place] == TOLD
    assert place in a.identity.describe().split(f"{PLACES_LABEL}: ", 1)[1]  # its prompts now list it
    told = [m for m in sim.stream.memories(name) if m.metadata.get("place") == place]
    assert len(told) == 1 and told[0].metadata["how"] == TOLD and "heard of" in told[0].text
    sim.spatial.hear(a, f"and again: {place}", START)  # nothing new: nothing written
    assert len([m for m in sim.stream.memories(name) if m.metadata.get("place") == place]) == 1


def test_knowing_better_replaces_knowing_worse_never_the_reverse() -> None:
    sim = _sim()
    name, place = _stranger(sim)
    a = sim.agents[name]
    sim.spatial.learn(a, place, TOLD, START)
    sim.spatial.learn(a, place, BEEN, START)
    sim.spatial.learn(a, place, SEEN, START)
    assert a.places.known[place] == BEEN


def test_a_plan_goes_only_to_a_place_the_agent_knows() -> None:
    sim = _sim()
    name, place = _stranger(sim)
    a = sim.agents[name]
    home = a.resident.home
    assert sim.spatial.resolve(a, place, home) != place  # unknown: a known place or home
    assert sim.spatial.resolve(a, place, home) in a.places.known
    sim.spatial.hear(a, f"meet me at {place}", START)
    assert sim.spatial.resolve(a, f"the party at {place}", home) == place
    free = _sim(frozenset({"spatial"}))  # ablated: the whole town is open, and no prompt lists places
    b = free.agents[name]
    assert free.spatial.resolve(b, place, home) == place and not b.places.known
    assert PLACES_LABEL not in b.identity.describe()


@given(place=st.sampled_from(BUILDINGS), before=st.text(max_size=30), after=st.text(max_size=30),
       case=st.sampled_from([str.lower, str.upper, str.title, str]))
@settings(max_examples=80, deadline=None)
def test_a_place_named_in_any_case_among_any_words_is_heard(place: str, before: str, after: str, case) -> None:
    sim = _SIM
    a = sim.agents[sim.order[0]]
    a.places.known.clear()
    sim.spatial.hear(a, f"{before} {case(place)} {after}", START)
    assert place in a.places.known  # (other names in the noise may be heard too)


@given(text=st.text(alphabet=st.characters(codec="ascii", categories=["Ll", "Zs"]), max_size=60))
@settings(max_examples=60, deadline=None)
def test_words_that_name_no_place_teach_nothing(text: str) -> None:
    a = _SIM.agents[_SIM.order[0]]
    a.places.known.clear()
    named = [b for b in BUILDINGS if b.lower() in f" {text} "]
    _SIM.spatial.hear(a, text, START)
    assert set(a.places.known) <= set(named)


_SIM = _sim(frozenset({"observation"}), n=2)  # hears without writing: the property tests above only look


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "run"
    start_run(RunConfig(agents=4, start=START, hours=1.5, embedder="hash"), out, progress=False)
    return out


def test_places_lists_an_agents_tree_and_refuses_a_stranger(small_run: Path, tmp_path: Path, capsys) -> None:
    out = small_run
    agent = "Isabella Rodriguez"
    assert main(["places", str(out), "--agent", agent]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith(f"{agent} knows ") and "  Hobbs Cafe (been)" in printed
    assert "    cafe counter: coffee machine" in printed  # been inside: its rooms and objects
    assert main(["places", str(out), "--agent", agent, "--json", str(tmp_path / "p.json")]) == 0
    tree = json.loads((tmp_path / "p.json").read_text())
    assert tree["agent"] == agent and tree["known"] == sum(len(a["buildings"]) for a in tree["tree"])
    capsys.readouterr()
    assert main(["places", str(out), "--agent", "Nobody", "--json", str(tmp_path / "q.json")]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'Nobody'" in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "q.json").exists()


def test_spatial_memory_is_ablatable_like_the_other_modules(tmp_path: Path) -> None:
    out = tmp_path / "run"
    start_run(RunConfig(agents=4, start=START, hours=1, embedder="hash", ablate=["spatial"]), out, progress=False)
    with MemoryStream(out / "streams.db", create=False, readonly=True) as stream:
        assert not any("place" in m.metadata for o in stream.owners() for m in stream.memories(o))
    with pytest.raises(ValueError, match="unknown ablation"):
        RunConfig(start=START, hours=1, ablate=["spatiall"])


@pytest.mark.slow
@given(name=st.text(max_size=40))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_places_of_any_name_not_an_agent_is_one_line(small_run: Path, capsys, name: str) -> None:
    capsys.readouterr()
    code = main(["places", str(small_run), "--agent", name])
    captured = capsys.readouterr()
    if name in ("Isabella Rodriguez", "Klaus Mueller", "Maria Lopez", "Ayesha Khan"):
        assert code == 0
    else:
        assert code == 2 and captured.out == "" and len(captured.err.strip().splitlines()) == 1
        assert captured.err.startswith("memstream: error: ")

"""The simulation: towns, determinism, exact resume, information spreading, faults, bad input."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import fields as _fields
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.errors import MemstreamError
from memstream.models import HashEmbedder, OfflineChatModel
from memstream.models.base import Completion
from memstream.sim import RunConfig, resume_run, start_run
from memstream.sim.agents.agent import Body, Conversation, Mind, Places, Senses, Social
from memstream.sim.agents.objects import ObjectStates
from memstream.sim.engine import Simulation
from memstream.sim.events import EventLog
from memstream.sim.town.residents import populate
from memstream.sim.town.scene import Scene
from memstream.sim.town.world import Map, default_town_path, load_town
from memstream.stream import MemoryStream

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)


def config(**kw) -> RunConfig:
    return RunConfig(**({"agents": 6, "start": START, "hours": 3, "embedder": "hash"} | kw))


def test_default_town_and_routes() -> None:
    town = load_town(default_town_path())
    assert len(town.residents) == 25
    kinds = " ".join(b.name for a in town.areas for b in a.buildings)
    for place in ("Hobbs Cafe", "Oak Hill College", "Johnson Park", "The Rose and Crown Pub", "Supply Store"):
        assert place in kinds
    m = Map(town)
    route = m.route("Oak Hill apartments", "College Library")
    assert route[0] == "Oak Hill apartments" and route[-1] == "College Library"
    assert m.resolve("the library", "x") == "College Library" and m.resolve("the moon", "home") == "home"


@pytest.mark.parametrize(("text", "problem"), [
    ("name: T\nareas: []\n", "areas"),
    ("name: T\nareas:\n- name: A\n  buildings:\n  - {name: B, x: 0, y: 0}\n  - {name: B, x: 1, y: 0}\n", "unique"),
    ("name: T\nareas:\n- name: A\n  buildings:\n  - {name: B, x: 0, y: 0}\npaths: [[B, Nowhere]]\n", "Nowhere"),
    ("name: T\nareas: [oops\n", "not valid YAML"),
])
def test_bad_town_files_get_one_clear_line(tmp_path: Path, capsys, text: str, problem: str) -> None:
    path = tmp_path / "town.yaml"
    path.write_text(text)
    with pytest.raises(MemstreamError, match=problem):
        load_town(path)
    assert main(["run", "--town", str(path), "--hours", "1", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_generated_residents_are_deterministic_and_many() -> None:
    town = load_town(default_town_path())
    a, b = populate(town, 1000, seed=7), populate(town, 1000, seed=7)
    assert a == b and len({r.name for r in a.residents}) == 1000
    assert a.residents[:25] == town.residents
    assert populate(town, 30, seed=8).residents[25:] != a.residents[25:30]
    buildings = {b.name for area in a.areas for b in area.buildings}
    assert all(r.home in buildings and (not r.workplace or r.workplace in buildings) for r in a.residents)
    per_home = Counter(r.home for r in a.residents[25:])
    assert max(per_home.values()) <= 8  # new streets keep a large town as sparse as a small one
    m = Map(a)
    assert m.route(a.residents[-1].home, "Hobbs Cafe")[-1] == "Hobbs Cafe"


@pytest.mark.slow
def test_any_number_of_residents_has_names_homes_and_work() -> None:
    """No fixed pool: past the plain names come double-barrelled ones, then numbered ones."""
    town = load_town(default_town_path())
    big = populate(town, 12_000, seed=1)
    names = [r.name for r in big.residents]
    assert len(names) == len(set(names)) == 12_000 and names == [r.name for r in populate(town, 12_000, 1).residents]
    assert [r.name for r in populate(town, 3_000, seed=1).residents] == names[:3_000]  # the same people first
    per_home = Counter(r.home for r in big.residents[25:])
    assert max(per_home.values()) <= 8
    m = Map(big)
    assert m.within(big.vision_radius)[big.residents[-1].home]  # neighbours found without comparing all pairs


@pytest.mark.slow
def test_a_large_town_has_the_density_and_commutes_of_a_small_one() -> None:
    """Generated residents live in wards of houses beside their workplaces, on a square grid: from
    1,000 to 10,000 residents the walk to work and what one can see stay the same, and everyone
    can still walk to the town's own places."""
    town = load_town(default_town_path())
    shape = {}
    for n in (1_000, 10_000):
        big = populate(town, n, seed=3)
        m, near = Map(big), Map(big).within(big.vision_radius)
        generated = big.residents[25:]
        warded = [r for r in generated if m.area_of[r.home] == m.area_of[r.workplace] != m.area_of["Hobbs Cafe"]]
        assert len(warded) > 0.9 * len(generated)
        commute = max(sum(m.distance(a, b) for a, b in itertools.pairwise(m.route(r.home, r.workplace)))
                      for r in warded)
        shape[n] = (commute, max(len(near[r.home]) for r in generated), max(Counter(r.workplace for r in generated).values()))
        assert all(m.route(r.home, "Hobbs Cafe")[-1] == "Hobbs Cafe" for r in generated[::97])
        xs = [b.x for a in big.areas for b in a.buildings]
        ys = [b.y for a in big.areas for b in a.buildings]
        assert (max(xs) - min(xs)) / (max(ys) - min(ys) + 1) < 4  # wards fill a square, not one long street
    assert shape[1_000] == shape[10_000] and shape[1_000][0] <= 12 and shape[1_000][2] <= 12


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """One uninterrupted run of ``config()`` and its metrics, made once: the tests below only read it."""
    out = tmp_path_factory.mktemp("whole") / "run"
    return out, start_run(config(), out, progress=False).metrics


@pytest.mark.slow
def test_the_same_run_twice_gives_the_same_event_log(tmp_path: Path, whole: tuple[Path, dict]) -> None:
    start_run(config(), tmp_path / "b", progress=False)
    a, b = (whole[0] / "events.jsonl").read_text(), (tmp_path / "b" / "events.jsonl").read_text()
    assert a == b and len(a.splitlines()) > 50
    events = [json.loads(line) for line in a.splitlines()]
    assert {"time", "agent", "action", "location"} <= set(events[0])
    assert any("utterance" in e for e in events)
    metrics = json.loads((whole[0] / "metrics.json").read_text())
    assert metrics["agent_steps"] == 6 * 3 * 360 and metrics["calls_per_agent_step"] <= 0.03


@pytest.mark.slow
def test_a_run_stopped_by_max_calls_resumes_to_the_same_log(tmp_path: Path, whole: tuple[Path, dict]) -> None:
    part = start_run(config(max_calls=whole[1]["model_calls"] // 2), tmp_path / "part", progress=False)
    assert part.stopped == "max-calls" and part.sim_time < datetime.fromisoformat(whole[1]["sim_time"])
    (tmp_path / "part" / "config.json").write_text(config().model_dump_json())  # lift the cap
    done = resume_run(tmp_path / "part", progress=False)
    assert done.stopped == "finished"
    assert (tmp_path / "part" / "events.jsonl").read_text() == (whole[0] / "events.jsonl").read_text()


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_log(tmp_path: Path, monkeypatch) -> None:
    whole = start_run(config(hours=2.5), tmp_path / "whole", progress=False)
    calls, kill_at = {"n": 0}, whole.metrics["model_calls"] * 2 // 3
    original = OfflineChatModel._generate

    def dying(self, messages, purpose, params) -> Completion:
        calls["n"] += 1
        if calls["n"] == kill_at:
            raise KeyboardInterrupt  # Ctrl-C after the first checkpoint
        return original(self, messages, purpose, params)

    monkeypatch.setattr(OfflineChatModel, "_generate", dying)
    with pytest.raises(KeyboardInterrupt):
        start_run(config(hours=2.5), tmp_path / "killed", progress=False)
    monkeypatch.setattr(OfflineChatModel, "_generate", original)
    assert (tmp_path / "killed" / "checkpoint" / "LATEST").exists()
    resume_run(tmp_path / "killed", progress=False)
    assert (tmp_path / "killed" / "events.jsonl").read_text() == (tmp_path / "whole" / "events.jsonl").read_text()


def test_news_spreads_through_conversation() -> None:
    town = load_town(default_town_path())
    pair = [r for r in town.residents if r.name in ("Isabella Rodriguez", "Maria Lopez")]
    # Maria keeps Isabella's hours today (a day off spent helping at the cafe), so they meet
    pair[1] = pair[1].model_copy(update={"home": pair[0].home, "wake": pair[0].wake, "routine": pair[0].routine,
                                         "relationships": {"Isabella Rodriguez": "friend"}})
    chat = OfflineChatModel()
    stream = MemoryStream(":memory:", HashEmbedder(256))
    fact = "Isabella Rodriguez is throwing a Valentine's Day party at Hobbs Cafe on February 14th at 5pm"
    stream.add("Isabella Rodriguez", fact, at=START - timedelta(hours=1), importance=9, kind="thought")
    sim = Simulation(town, pair, stream, chat, EventLog(None), start=START)
    sim.run(START + timedelta(hours=2))
    heard = [m for m in stream.memories("Maria Lopez") if "Valentine's Day party" in m.text]
    assert any(m.kind == "dialogue" for m in heard), "Maria never heard about the party"
    assert any(m.kind == "thought" and m.text.startswith("Isabella Rodriguez told Maria Lopez that") for m in heard)


class FlakyChat(OfflineChatModel):
    """Fails every 5th importance call, as a rate-limited endpoint would after its retries."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def _generate(self, messages, purpose, params):
        if purpose.startswith("importance"):  # one rating or a round's
            self.n += 1
            if self.n % 5 == 0:
                raise MemstreamError("openai:m (importance) failed: RateLimitError: slow down")
        return super()._generate(messages, purpose, params)


def test_a_failing_model_call_falls_back_and_the_run_goes_on() -> None:
    town = load_town(default_town_path())
    chat = FlakyChat()
    stream = MemoryStream(":memory:", HashEmbedder(64))
    sim = Simulation(town, town.residents[:6], stream, chat, EventLog(None), start=START)
    sim.run(START + timedelta(hours=1))
    assert sim.agent_steps == 6 * 360
    failed = sum(u.failed for p, u in chat.usage.by_purpose.items() if p.startswith("importance"))
    assert failed > 0 and sim.model_failures == failed  # each fallback counted once


def test_run_replay_interview_cli(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    code = main(["run", "--agents", "4", "--hours", "1.5", "--embedder", "hash", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "finished at 2023-02-13 07:30" in printed and f"memstream replay {out}" in printed
    assert main(["replay", str(out), "--agent", "Isabella Rodriguez", "--to", "2023-02-13T07:00:00-08:00"]) == 0
    story = capsys.readouterr().out.splitlines()
    assert story and all("Isabella Rodriguez:" in line for line in story)
    assert main(["interview", str(out), "--agent", "Isabella Rodriguez", "What are you doing today?"]) == 0
    assert capsys.readouterr().out.startswith("Isabella Rodriguez: ")


@pytest.mark.slow
@pytest.mark.parametrize(("argv", "problem"), [
    (["run", "--hours", "0"], "--hours must be positive"),
    (["run", "--hours", "1", "--start", "2023-02-13T06:00:00"], "no time zone"),
    (["replay", "{tmp}"], "not a run directory"),
    (["replay", "{run}", "--agent", "Nobody"], "unknown agent 'Nobody'"),
    (["interview", "{run}", "--agent", "Nobody", "hi"], "unknown agent 'Nobody'"),
    (["run", "--agents", "2", "--hours", "1", "--embedder", "hash", "--out", "{run}"], "is not empty"),
])
def test_run_bad_input(tmp_path: Path, capsys, argv, problem) -> None:
    run_dir = tmp_path / "r"
    start_run(config(agents=2, hours=0.5), run_dir, progress=False)
    code = main([a.format(tmp=tmp_path, run=run_dir) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and problem in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_no_storm_of_agents_reacting_to_reactions(tmp_path: Path) -> None:
    # A re-plan is visible to others; without a cooldown, poignant reactions fed on each other and
    # grew without bound. The whole town, a working day.
    start_run(config(agents=25, hours=12), tmp_path / "r", progress=False)
    events = [json.loads(line) for line in (tmp_path / "r" / "events.jsonl").read_text().splitlines()]
    reactions = Counter((e["agent"], e["time"][:13]) for e in events if e["action"].startswith("reacts to"))
    assert max(reactions.values(), default=0) <= 2  # per agent per simulated hour
    assert max(len(e["action"]) for e in events) < 600


@pytest.mark.slow
def test_a_finished_run_extends_like_a_longer_one(tmp_path: Path) -> None:
    start_run(config(agents=4, hours=1), tmp_path / "short", progress=False)
    resume_run(tmp_path / "short", hours=2, progress=False)
    start_run(config(agents=4, hours=2), tmp_path / "long", progress=False)
    assert (tmp_path / "short" / "events.jsonl").read_text() == (tmp_path / "long" / "events.jsonl").read_text()


@pytest.mark.slow
def test_the_offline_rules_answer_every_stage_without_a_lost_answer(tmp_path: Path) -> None:
    """The stand-in must pass the same checks a real model's answers do (short activities, plans that
    fill the day), for the bundled residents and generated ones alike."""
    metrics = start_run(config(agents=80, hours=3), tmp_path / "run", progress=False).metrics
    assert metrics["model_failures"] == 0 and metrics["retried"] == 0, metrics["lost_by_purpose"]


@pytest.mark.parametrize("agents", ["0", "-4", "1e9", "1000000000"])
def test_an_impossible_number_of_agents_is_one_line_and_writes_nothing(agents: str, tmp_path: Path, capsys) -> None:
    """No agents, not a number, or more than any machine's memory holds (refused before the town
    is built): one line naming the fix, exit 2, no run folder."""
    out = tmp_path / "run"
    assert main(["run", "--agents", agents, "--hours", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--agents" in err and not out.exists()


# -- components' typed state ------------------------------------------------------------------

_names = st.text(min_size=1, max_size=12)
_times = st.floats(min_value=0, max_value=4e9, allow_nan=False)


@given(body=st.builds(Body, location=_names, route=st.lists(_names, max_size=4), progress=_times),
       senses=st.builds(Senses, seen=st.dictionaries(_names, _names, max_size=4),
                        perceived=st.tuples(st.integers(0, 99), st.integers(0, 99)), perceived_since_check=st.booleans()),
       mind=st.builds(Mind, activity=_names, block_activity=_names, next_react_s=_times, currently=st.text(max_size=30),
                      heard=st.lists(st.integers(1, 999), max_size=4)),
       social=st.builds(Social, cooldown=st.dictionaries(_names, _times, max_size=4), next_chat_s=_times),
       places=st.builds(Places, known=st.dictionaries(_names, st.sampled_from(["been", "seen", "told"]), max_size=4)),
       conversation=st.builds(Conversation, a=_names, b=_names, turns=st.lists(st.tuples(_names, _names), max_size=3),
                              next_speaker=_names, place=_names, relationships=st.dictionaries(_names, _names, max_size=2)))
@settings(max_examples=60, deadline=None)
def test_a_component_state_goes_through_json_and_back_unchanged(body, senses, mind, social, places,
                                                                conversation) -> None:
    for part in (body, senses, mind, social, places, conversation):
        state = json.loads(json.dumps(part.get_state()))
        again = type(part).from_state(state) if isinstance(part, Conversation | Body) else type(part)()
        again.set_state(state)
        assert again == part, type(part).__name__


def test_a_component_state_is_its_fields_not_a_hand_written_list() -> None:
    """Every field of a component is in its state (under its name or its checkpoint key), and
    nothing else: a field added to a component is checkpointed with no other change."""
    for part in (Body("home"), Senses(), Mind(), Social(), Places(), Conversation("a", "b"), Scene(), ObjectStates()):
        keys = {f.metadata.get("key", f.name) for f in _fields(part) if f.metadata.get("state", True)}
        assert set(part.get_state()) == keys, type(part).__name__
    assert "ended" not in Conversation("a", "b").get_state()  # marked state=False: only true mid-step


def test_a_damaged_agent_record_is_named_not_half_restored() -> None:
    from memstream.sim.agents.agent import Agent

    good = Agent(load_town(default_town_path()).residents[0], Body("home")).get_state()
    assert Agent.state_problem(good) is None
    assert Agent.state_problem({k: v for k, v in good.items() if k != "location"}) == "Body state has no location"
    assert Agent.state_problem({**good, "heard": None}) == "Mind state has heard: null"
    assert Agent.state_problem({**good, "plan": None}) is None  # a plan may be absent
    assert Agent.state_problem([1, 2]) == "an agent's state has no name"

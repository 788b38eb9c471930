"""A real model's answers, recorded (tests/fixtures/real, see its README), replayed through every stage.

The offline rules keep the other tests deterministic; these pin what memstream makes of what a real
small model actually says: which answers are read, which are recovered from damage, which are
refused with a reason, and what a simulation and the CLI stages write from them.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from functools import partial
from pathlib import Path

import pytest

from memstream.errors import MemstreamError, StructuredOutputError
from memstream.models import run_direct
from memstream.models.base import ChatModel, Completion, Message
from memstream.models.cache import CachedChatModel
from memstream.planning import parse as planning_parse
from memstream.planning import prompts as planning_prompts
from memstream.reflection import parse as reflection_parse
from memstream.reflection import prompts as reflection_prompts
from memstream.sim import RunConfig, RunDir, interview_stage, measures, start_run
from memstream.sim.agents.whisper import parse_whispers
from memstream.sim.events import read_events
from memstream.sim.talk import parse as sim_parse
from memstream.sim.talk import prompts as sim_prompts
from memstream.stream import check_file
from memstream.stream.importance import parse_importance
from tests.helpers import FIXTURES, ROOT

RECORDING = FIXTURES / "real"
CALLS = [json.loads(line) for line in (RECORDING / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
REPORT = json.loads((RECORDING / "report.json").read_text(encoding="utf-8"))
PARSERS = {
    "importance": parse_importance,
    planning_prompts.DAY_PURPOSE: partial(planning_parse.parse_strokes, at_least=planning_prompts.MIN_STROKES),
    planning_prompts.HOURS_PURPOSE: planning_parse.parse_hours,
    planning_prompts.ACTIONS_PURPOSE: planning_parse.parse_actions,
    planning_prompts.REACT_PURPOSE: planning_parse.parse_reaction,
    planning_prompts.REVISE_PURPOSE: planning_parse.parse_revision,
    reflection_prompts.QUESTIONS_PURPOSE: reflection_parse.parse_questions,
    reflection_prompts.INSIGHTS_PURPOSE: reflection_parse.parse_insights,
    sim_prompts.START_PURPOSE: sim_parse.parse_talk,
    sim_prompts.TURN_PURPOSE: sim_parse.parse_turn,
    sim_prompts.SUMMARY_PURPOSE: sim_parse.parse_summary,
    sim_prompts.RELATIONSHIP_PURPOSE: sim_parse.parse_relationship,
    sim_prompts.POIGNANCY_PURPOSE: parse_importance,
    sim_prompts.PLANS_PURPOSE: sim_parse.parse_plans,
    sim_prompts.INTERVIEW_PURPOSE: sim_parse.parse_answer,
}


def first_tries() -> list[dict]:
    """The recorded answers to first questions (a retry's messages end with the runner's complaint)."""
    return [c for c in CALLS if not c["messages"][-1]["content"].startswith("Your answer could not be read")]


def test_the_fixtures_say_what_made_them() -> None:
    note = (RECORDING / "README.md").read_text(encoding="utf-8")
    assert "Qwen2.5 Coder 1.5B Instruct" in note and "llama-cpp-python" in note
    assert len(CALLS) >= 100 and {c["purpose"] for c in CALLS} >= {"importance", "planning.day", "dialogue"}


def test_every_recorded_answer_is_read_or_refused_with_a_reason() -> None:
    for call in CALLS:
        parse = PARSERS[call["purpose"]]
        try:
            parse(call["answer"])
        except (StructuredOutputError, ValueError) as e:
            assert str(e), call  # refused, and saying why (the runner shows the model this)


def test_most_first_answers_are_usable_for_every_purpose() -> None:
    """The share of first answers each parser reads (checks that need the request aside): all of them
    were when recorded, for every purpose but one, and at least 95% must stay so. The exception:
    asked to plan the day of someone with no routine, this model twice gave back the prompt's worked
    example (a baker's day), which is refused by design; every day plan refused is such a copy."""
    by: dict[str, list[bool]] = {}
    copies = 0
    for call in first_tries():
        try:
            PARSERS[call["purpose"]](call["answer"])
            ok = True
        except (StructuredOutputError, ValueError) as e:
            ok = False
            copies += "example's plan" in str(e)
        by.setdefault(call["purpose"], []).append(ok)
    shares = {p: sum(v) / len(v) for p, v in by.items()}
    assert set(shares) == set(PARSERS)
    day = planning_prompts.DAY_PURPOSE
    assert all(share >= 0.95 for p, share in shares.items() if p != day), shares
    assert by[day].count(False) == copies == 1 and shares[day] == 0.75  # the retry was a copy too
    assert all(row["usable"] >= 0.95 for p, row in REPORT["purposes"].items() if p != day)


def test_recovered_insights_keep_every_good_item() -> None:
    """A real answer with its JSON broken still yields its well-formed insights."""
    damaged = '{"insights": [{"insight": "Klaus cares about his research", "because": [2, 3]}], ' \
              '{"insights": [{"insight": "Klaus and Maria are close", "because": [1]}, {"insight": "broken'
    assert [i.insight for i in reflection_parse.parse_insights(damaged)] == [
        "Klaus cares about his research", "Klaus and Maria are close"]
    for call in CALLS:
        if call["purpose"] == reflection_prompts.INSIGHTS_PURPOSE:
            try:
                insights = reflection_parse.parse_insights(call["answer"])
            except StructuredOutputError:
                continue
            assert all(i.insight.strip() for i in insights)


class Unreachable(ChatModel):
    """Stands where the recorded model stood. A first question that reaches it means the replay diverged;
    a retry may, where the recorded model failed it (one did: its prompt, with the long answer it
    followed, passed the server's 4,096-token context), and it fails here the same way."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.failed: list[str] = []

    def _generate(self, messages: list[Message], purpose: str, params: dict) -> Completion:
        if not messages[-1]["content"].startswith("Your answer could not be read"):
            raise AssertionError(f"a {purpose} call was not in the recording")
        self.failed.append(purpose)
        raise MemstreamError(f"{purpose}: the recorded model failed this retry")


#: The recorded answers the planning sense checks (docs/sense-checks.md) now refuse: the replay asks a retry
#: the recording does not hold, so these replays fail until the fixtures are recorded again (with the retries).
#: Since the sim prompts' version 6 (the offer's time of day, relationship and untold news; the interview's
#: recent day) the two simulation replays would also miss at their conversation offers (each recording holds
#: two), and the benchmark's interviews (calls.jsonl) no longer match: the replays already stop earlier
#: (importance rounds). tests/fixtures/real-party/ holds today's prompts (replayed below).
REFUSED_BY_SENSE_CHECKS = {
    "simulation": "planning.hours: strokes laid on consecutive hours (lunch at 09:00, dinner at 11:00, twice; lunch "
                  "at 16:00); planning.actions: 20 or 30 minutes of actions for a 60-minute block (4 answers)",
    "cli": "planning.actions: 35 minutes of actions for the 06:00-07:00 block",
}


@pytest.mark.xfail(reason=REFUSED_BY_SENSE_CHECKS["simulation"], strict=True)
def test_the_recorded_simulation_replays_and_what_it_wrote_holds(tmp_path: Path) -> None:
    cache = tmp_path / "recorded-calls.db"
    shutil.copyfile(RECORDING / "run" / "calls.db", cache)
    config = RunConfig.model_validate_json((RECORDING / "run" / "config.json").read_text())
    # Recorded before spatial memory listed each agent's known places in its prompts: replayed without it (the
    # prompts it was recorded with) until it is recorded again (tests/fixtures/real/README.md).
    config = config.model_copy(update={"ablate": ["spatial"]})
    model = Unreachable(REPORT["model"])
    result = start_run(config, tmp_path / "run", chat=CachedChatModel(model, cache), progress=False)
    assert result.stopped == "finished"
    assert model.failed == ["planning.actions"] * len(model.failed) and len(model.failed) <= 2  # batch, then alone
    assert result.metrics["model_failures"] == REPORT["sim_failures"]  # the first answer was salvaged, as recorded
    events = read_events(tmp_path / "run" / "events.jsonl")
    assert sum(e["action"].startswith("plans the day") for e in events) >= 1
    actions = [e["action"] for e in events if e["agent"] and not e["action"].startswith(
        ("plans the day", "says to", "starts a", "ends the", "reflects", "reacts to", "talking with"))]
    assert actions and max(len(a.split()) for a in actions) <= planning_parse.MAX_ACTIVITY_WORDS + 2
    assert check_file(tmp_path / "run" / "streams.db") == []  # citations within owner, vectors whole


@pytest.mark.xfail(reason=REFUSED_BY_SENSE_CHECKS["cli"], strict=True)
def test_the_recorded_cli_stages_replay(monkeypatch) -> None:
    """The reflection and the plan the benchmark made, made again from the recording: every insight
    cites real statements, the plan has its strokes, every activity is short."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import real_model

    answers: dict[str, list[str]] = {}
    for call in CALLS:
        answers.setdefault(json.dumps([call["purpose"], call["messages"]]), []).append(call["answer"])

    class Replay(ChatModel):
        name = REPORT["model"]

        def _generate(self, messages: list[Message], purpose: str, params: dict) -> Completion:
            queue = answers[json.dumps([purpose, messages])]
            return Completion(queue[0] if len(queue) == 1 else queue.pop(0))

    real_model.STRICT.update(real_model._strict_models())
    log = {"reflections": [], "strokes": [], "activities": [], "interviews": [], "reactions": [], "revisions": []}
    chat = real_model.Recorder(Replay())
    real_model.cli_stages(chat, log)
    assert log["reflections"] and log["reflections"][0] >= 1  # the reflection wrote cited insights
    assert log["strokes"][0] == 1  # both answers copied the prompt's example: refused, the routine stood in
    assert log["reactions"] == ["go to the book reading at the college library at 18:00"]  # an appointment
    assert log["revisions"][0] and "Valentine" in log["revisions"][0]  # the morning's revision, from memory
    assert max(len(a.split()) for a in log["activities"]) <= planning_parse.MAX_ACTIVITY_WORDS


@pytest.mark.parametrize("purpose", sorted(PARSERS))
def test_each_parser_survives_any_text(purpose: str) -> None:
    for text in ["", "{", "[]", "null", "9" * 5000, "\x00", '{"a": ' * 200, "As an AI language model, I cannot"]:
        with contextlib.suppress(StructuredOutputError, ValueError):
            PARSERS[purpose](text)


PARTY = RECORDING.parent / "real-party"


@pytest.fixture(scope="module")
def party_replay(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The shrunk party run (tests/fixtures/real-party/), replayed from its recording with today's code: every
    call it makes must be in the recording, so any change to a prompt or to what the run asks shows here."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import party_run

    tmp = tmp_path_factory.mktemp("party")
    cache = tmp / "recorded-calls.db"
    shutil.copyfile(PARTY / "run" / "calls.db", cache)
    config = RunConfig.model_validate_json((PARTY / "run" / "config.json").read_text())
    whispers = parse_whispers((PARTY / "run" / "whispers.json").read_text())
    recorded = json.loads((PARTY / "report.json").read_text())
    model = Unreachable(recorded["llm"])
    chat = CachedChatModel(model, cache, mode="replay")
    result = start_run(config, tmp / "run", chat=chat, whispers=whispers, progress=False)
    run = RunDir.open(tmp / "run")
    with run:
        answers = {r.name: run_direct(interview_stage(run.stream, r, party_run.QUESTION, run.stands_at()), chat)[0]
                   for r in run.town.residents}
    return {"result": result, "run": run, "model": model, "recorded": recorded, "answers": answers,
            "fact": party_run.FACT}


@pytest.mark.slow
def test_the_party_run_replays_to_its_end_from_the_recording(party_replay: dict) -> None:
    result, model = party_replay["result"], party_replay["model"]
    assert result.stopped == "finished" and not model.failed
    assert result.metrics["model_failures"] == party_replay["recorded"]["happened"]["model_failures"]


@pytest.mark.slow
def test_what_the_recorded_party_run_did_comes_out_the_same(party_replay: dict) -> None:
    """The ratings' histogram, the offers and who heard of the party, as the benchmark reported them."""
    metrics, happened = party_replay["result"].metrics, party_replay["recorded"]["happened"]
    histogram = {int(k): v for k, v in metrics["importance_histogram"].items()}
    assert histogram == {int(k): v for k, v in happened["importance"]["histogram"].items()}
    assert metrics["conversation_offers"] == happened["conversation_offers"]
    assert metrics["reflection"] == happened["reflection"]
    assert sorted(measures.knowers(party_replay["run"], party_replay["fact"])) == happened["knowers"]


def test_the_recorded_party_interviews_replay(party_replay: dict) -> None:
    assert party_replay["answers"] == party_replay["recorded"]["happened"]["interviews"]

"""Scenario evals: the format and its loader, the phrase criteria, the offline judge, the run (facts
matched turn by turn, the turn a fact is lost, history reset between sessions), the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.designs import COMPACTIONS, DESIGNS
from memstream.errors import MemstreamError
from memstream.eval import Models, bundled_scenarios, criteria, evaluate_scenarios, load_scenario, prompts
from memstream.eval.offline import judge_by_phrases
from memstream.models import CachedChatModel, ChatModel, Completion, HashEmbedder, OfflineChatModel
from memstream.testing import ScriptedChat
from tests.helpers import FIXTURES

FILLER = ["We talked about the weather in {n} and nothing else.", "Tool output number {n} listed many files.",
          "Another unrelated remark, number {n}, about lunch plans."]


def small(fillers: int = 6, **extra: Any) -> dict[str, Any]:
    """A two-session scenario: a fact in the first turn, ``fillers`` unrelated turns, then a new session
    with a memory-dependent question about the fact and a corruptible one after an override."""
    turns = [{"id": "t0", "user": "The deploy password rotation happens every Thursday at 14:00.",
              "tools": [{"name": "calendar_add", "args": {"day": "Thursday"}, "result": "Created 'rotation'."}],
              "assistant": "Noted: rotation on Thursdays at 14:00.",
              "remember": [{"id": "rotation", "probe": "When does the password rotation happen?",
                            "require": ["Thursday"]}]}]
    turns += [{"id": f"f{i}", "user": FILLER[i % 3].format(n=i)} for i in range(fillers)]
    second = [{"id": "o1", "user": "This week only, the rotation moves to Friday.",
               "ask": [{"id": "q-now", "ask": "When is this week's rotation?", "kind": "memory-corruptible",
                        "criterion": "Friday, the one-off override.", "require": ["Friday"]}]}]
    data = {"format": "memstream-scenario/1", "name": "tiny", "owner": "ann",
            "sessions": [{"id": "s1", "at": "2026-01-05T09:00:00+00:00", "turns": turns},
                         {"id": "s2", "at": "2026-01-06T09:00:00+00:00",
                          "questions": [{"id": "q-day", "ask": "Which day is the password rotation?",
                                         "kind": "memory-dependent", "criterion": "Thursday.",
                                         "require": ["Thursday"]}],
                          "turns": second}]}
    data.update(extra)
    return data


def write(tmp_path: Path, data: Any, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True) if name.endswith(".yaml") else json.dumps(data))
    return path


def models(answer: Any = None) -> Models:
    chat = OfflineChatModel()
    return Models(chat, answer or chat, chat, HashEmbedder(64))


# -- the format ----------------------------------------------------------------------------------------------

def test_the_bundled_scenarios_load_and_the_interleaved_run_mixes_them() -> None:
    paths = bundled_scenarios()
    assert [p.stem for p in paths][-1] == "interleaved" and len(paths) >= 4
    loaded = {p.stem: load_scenario(p) for p in paths}
    singles = [s for name, s in loaded.items() if name != "interleaved"]
    assert len({s.kind for s in singles}) == len(singles) >= 3
    for s in loaded.values():
        kinds = {q.kind for q in s.questions()}
        assert kinds == {"memory-dependent", "memory-corruptible"}, s.name
    mixed = loaded["interleaved"]
    assert len(list(mixed.turns())) >= 40
    assert len(list(mixed.turns())) == sum(len(list(s.turns())) for s in singles)
    owners = [sid.split("/")[0] for sid in (s.id for s in mixed.sessions)]
    assert owners != sorted(owners)  # really interleaved, not one scenario after another
    times = [at for _, _, at in mixed.turns()]
    assert times == sorted(times)


def test_a_turn_gives_its_time_or_follows_the_previous_one(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, small(fillers=2)))
    times = s.sessions[0].times()
    assert [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)] == [120, 120]


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d["sessions"][0].update(at="2026-01-05T09:00:00"), "time zone"),
    (lambda d: d["sessions"][1]["turns"][0].update(id="t0"), "used twice"),
    (lambda d: d["sessions"][1]["turns"][0].update(expire=["nothing"]), "no earlier turn remembers"),
    (lambda d: d["sessions"][1]["questions"][0].update(require=[]), "require"),
    (lambda d: d["sessions"][1]["questions"][0].update(kind="memory-ish"), "kind"),
    (lambda d: d["sessions"][1].update(at="2026-01-01T09:00:00+00:00"), "time order"),
    (lambda d: d["sessions"][0]["turns"][0]["remember"][0].update(require=["!!"]), "no letters or digits"),
    (lambda d: d["sessions"][0]["turns"][0].update(extra=1), "extra"),
    (lambda d: d.update(format="memstream-scenario/9"), "format"),
    (lambda d: d.update(sessions=[]), "sessions"),
    (lambda d: d.update(owner="ann\x07"), "owner"),
    (lambda d: d["sessions"][0]["turns"][0].update(at="2026-01-05T08:00:00+00:00"), "before the session opens"),
])
def test_a_bad_scenario_is_one_line_naming_the_problem(tmp_path: Path, change: Any, words: str) -> None:
    data = small()
    change(data)
    with pytest.raises(MemstreamError, match=words) as caught:
        load_scenario(write(tmp_path, data))
    assert "\n" not in str(caught.value)


def test_an_interleaved_file_names_its_sessions_and_its_parts(tmp_path: Path) -> None:
    write(tmp_path, small(), "a.yaml")
    other = small(name="other")
    for s, day in zip(other["sessions"], ("2026-01-05T12:00:00+00:00", "2026-01-07T09:00:00+00:00"), strict=True):
        s["at"] = day
    write(tmp_path, other, "b.yaml")
    q = {"id": "extra", "ask": "Which day?", "kind": "memory-dependent", "criterion": "Thursday.",
         "require": ["Thursday"]}
    mix = {"format": "memstream-interleave/1", "name": "mix", "scenarios": ["a.yaml", "b.yaml"],
           "questions": {"other/s2": [q]}}
    s = load_scenario(write(tmp_path, mix, "mix.yaml"))
    assert [x.id for x in s.sessions] == ["tiny/s1", "other/s1", "tiny/s2", "other/s2"]
    assert [x.id for x in s.sessions[3].questions] == ["other/q-day", "extra"]
    mix["questions"] = {"nobody/s1": [q]}
    with pytest.raises(MemstreamError, match="no session of"):
        load_scenario(write(tmp_path, mix, "mix.yaml"))
    mix.update(questions={}, scenarios=["a.yaml", "a.yaml"])
    with pytest.raises(MemstreamError, match="named alike"):
        load_scenario(write(tmp_path, mix, "mix.yaml"))
    mix.update(scenarios=["a.yaml", "mix.yaml"])  # itself: refused, not an endless recursion
    with pytest.raises(MemstreamError, match="scenario files only"):
        load_scenario(write(tmp_path, mix, "mix.yaml"))


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=3), max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values)
def test_any_json_is_a_scenario_or_one_line(tmp_path: Path, value: Any) -> None:
    _loads_or_one_line(write(tmp_path, value, "g.json"))


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.lists(st.sampled_from(["sessions", 0, 1, "turns", "questions", "remember", "require", "id", "at",
                                      "user", "tools", "kind", "format", "name", "ask", "expire"]), min_size=1,
                     max_size=6), value=json_values)
def test_a_scenario_changed_anywhere_loads_or_is_one_line(tmp_path: Path, path: list[Any], value: Any) -> None:
    data = small(fillers=1)
    node = data
    for step in path[:-1]:
        nxt = node[step] if isinstance(node, dict) and step in node or (
            isinstance(node, list) and isinstance(step, int) and step < len(node)) else None
        if not isinstance(nxt, dict | list):
            break
        node = nxt
    if isinstance(node, dict):
        node[path[-1]] = value
    elif isinstance(node, list) and node:
        node[0] = value
    _loads_or_one_line(write(tmp_path, data, "m.json"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=80) | st.sampled_from(["format: memstream-scenario/1\nsessions: [1]", "a: [", "- 1",
                                                     "format: memstream-interleave/1\nscenarios: [x, y]\nname: m"]))
def test_any_yaml_text_is_a_scenario_or_one_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _loads_or_one_line(path)


def test_tool_arguments_yaml_reads_as_dates_are_written_as_text(tmp_path: Path) -> None:
    data = small(fillers=0)
    data["sessions"][0]["turns"][0]["tools"][0]["args"] = {"day": "DATE"}
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump(data).replace("DATE", "2026-03-20"))  # unquoted: YAML reads a date
    row, = evaluate_scenarios([load_scenario(path)], ["full"], 500, models(), progress=False)
    assert row["turns"] == 2


def _loads_or_one_line(path: Path) -> None:
    try:
        load_scenario(path)
    except MemstreamError as e:
        assert "\n" not in str(e) and str(e)


# -- criteria and the offline judge ------------------------------------------------------------------------

def test_phrases_match_whole_words_ignoring_case_and_punctuation() -> None:
    assert criteria.mentions("Line-length: 100.", "line length 100")
    assert not criteria.mentions("line length 1000", "100")
    assert criteria.mentions("we moved to ruff format", ["black", "ruff format"])
    assert criteria.holds("book the aisle seat", ["aisle"], ["window"])
    assert not criteria.holds("aisle, not window", ["aisle"], ["window"])
    assert criteria.parse(criteria.render(["a", ["b", "c"]])) == ["a", ["b", "c"]]
    assert criteria.parse("not json") == [] and criteria.parse('{"a": 1}') == []


def _judged(answer: str, require: list[Any], forbid: list[Any], memory: str = "Tidewater uses 100.") -> str:
    return judge_by_phrases(prompts.scenario_judge_messages(
        "What line length?", "Says 79, kelp's.", criteria.render(require), criteria.render(forbid), answer, memory))


def test_the_offline_judge_fails_a_non_answer_and_a_leak_and_passes_a_right_answer() -> None:
    assert _judged("79", ["79"], ["100"]) == "yes"
    assert _judged("I don't know", ["79"], ["100"]) == "no"
    assert _judged("", ["79"], []) == "no"
    assert _judged("79 in kelp, 100 in tidewater", ["79"], ["100"]) == "no"
    assert _judged("79", [], []) == "no"  # nothing required: nothing to pass
    # the memory and the criterion's words are for a model judge; a phrase in them is not the answer's
    assert _judged("I don't know", ["100"], [], memory="The line length is 100") == "no"


# -- the run -------------------------------------------------------------------------------------------------

def test_a_fact_pushed_out_of_full_is_lost_at_the_turn_it_left(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, small(fillers=8)))
    full, vector = evaluate_scenarios([s], ["full", "vector"], 60, models(), progress=False)
    turns = full["per_turn"]
    lost_at = next(t["turn"] for t in turns if t["lost"])
    assert full["per_fact"][0]["lost_at"] == lost_at and full["per_fact"][0]["found_first"] == "t0"
    before = [t for t in turns[:[t["turn"] for t in turns].index(lost_at)]]
    assert all(t["matched"] == 1 for t in before) and turns[-1]["matched"] == 0
    assert full["matched"] < 1 and full["lost"] == 1
    assert vector["matched"] == 1 and vector["lost"] == 0  # relevance finds it however old
    assert full["memory_dependent"] == {"n": 1, "passed": 0, "share": 0.0}
    assert vector["memory_dependent"]["passed"] == 1
    assert full["memory_corruptible"]["n"] == 1
    assert full["turns"] == 10 and full["facts"] == 1


def test_history_is_reset_between_sessions_and_questions_are_not_written(tmp_path: Path) -> None:
    seen: list[str] = []

    def answer(messages: list[Any]) -> str:
        seen.append(messages[-1]["content"])
        return "Thursday"

    s = load_scenario(write(tmp_path, small(fillers=1)))
    row, = evaluate_scenarios([s], ["full"], 2000, models(ScriptedChat({prompts.SCENARIO_ANSWER_PURPOSE: answer})),
                              progress=False)
    opening, after = (x.split(prompts.HISTORY_MARK)[1].split("The date now is")[0] for x in seen)
    assert "just begun" in opening and "rotation" not in opening  # only memory carries over
    assert "moves to Friday" in after and "Thursday at 14:00" not in after
    assert "Which day is the password rotation" not in seen[1].split(prompts.HISTORY_MARK)[0]
    assert [q["passed"] for q in row["questions"]] == [True, False]  # "Thursday" is right, then stale


def test_every_design_runs_and_reports_its_cost_and_counters(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, small(fillers=12)))
    rows = evaluate_scenarios([s], list(DESIGNS), 300, models(), settings={"buffer-summary": {"turns": 4, "batch": 2}},
                              progress=False)
    by = {r["design"]: r for r in rows}
    assert set(by) == set(DESIGNS)
    assert by["buffer-summary"]["compactions"] == by["buffer-summary"]["counters"][COMPACTIONS] > 0
    assert by["full"]["compactions"] is None and by["full"]["dropped_edits"] is None
    assert by["stream"]["cost_per_turn"]["calls"] > 0 and by["full"]["cost_per_turn"]["calls"] == 0
    for r in rows:
        assert len(r["per_turn"]) == 14 and r["cost_per_turn"]["seconds"] >= 0
        assert r["context_tokens"] <= 300


# -- the command -----------------------------------------------------------------------------------------

def test_the_command_writes_json_and_refuses_bad_input_writing_nothing(tmp_path: Path, capsys: Any) -> None:
    src = write(tmp_path, small())
    out = tmp_path / "out.json"
    assert main(["eval", "scenarios", str(src), "--design", "full,vector", "--embedder", "hash",
                 "--budget", "500", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [(r["scenario"], r["design"], r["budget"]) for r in rows] == [("tiny", "full", 500), ("tiny", "vector", 500)]
    assert "per_turn" in rows[0] and "questions" in rows[0]
    bad = write(tmp_path, {**small(), "format": "nope"}, "bad.yaml")
    for argv in ([str(bad)], [str(src), "--budget", "0"], [str(src), "--budget", "500,1000"],
                 [str(src), "--design", "nothing"], [str(tmp_path / "missing.yaml")], [str(src), str(bad)],
                 [str(src), "--plot", str(tmp_path / "p.png")], [str(src), "--limit", "3"]):
        out2 = tmp_path / "never.json"
        capsys.readouterr()
        assert main(["eval", "scenarios", *argv, "--embedder", "hash", "--json", str(out2)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("memstream: error:") and err.count("\n") == 1 and not out2.exists()
    assert main(["eval", "locomo", str(src), str(src)]) == 2
    png = tmp_path / "matched.png"
    assert main(["plot", "scenarios", str(out), "-o", str(png)]) == 0 and png.stat().st_size > 1000
    assert main(["plot", "scenarios", str(src), "-o", str(tmp_path / "no.png")]) == 2  # not eval output
    assert not (tmp_path / "no.png").exists()


def test_an_answer_model_that_gives_nothing_usable_stops_the_run_in_one_line(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, small(fillers=1)))
    mute = ScriptedChat({prompts.SCENARIO_ANSWER_PURPOSE: lambda _m: "   "})
    with pytest.raises(MemstreamError, match="answer model .* gave no usable answer") as caught:
        evaluate_scenarios([s], ["full"], 500, models(mute), progress=False)
    assert "\n" not in str(caught.value)


def test_the_interleaved_run_goes_end_to_end_and_outgrows_a_full_context() -> None:
    mixed = load_scenario(bundled_scenarios()[-1])
    full, = evaluate_scenarios([mixed], ["full"], 1000, models(), progress=False)
    assert full["turns"] == len(list(mixed.turns())) >= 40
    assert full["memory_dependent"]["n"] + full["memory_corruptible"]["n"] == len(mixed.questions())
    assert full["lost"] > 0  # 42 turns do not fit 1,000 tokens: the oldest facts leave, each at a named turn
    assert all(f["lost_at"] in {t["turn"] for t in full["per_turn"]} for f in full["per_fact"] if f["lost_at"])


# -- a real model's answers, recorded (tests/fixtures/real-scenarios, see its README) ------------------

REAL = FIXTURES / "real-scenarios"


class Recorded(ChatModel):
    """Stands where the recorded model stood; the replay cache answers, and a question not in it fails."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def _generate(self, messages: list[Any], purpose: str, params: dict[str, Any]) -> Completion:
        raise AssertionError(f"a {purpose} call reached the model: it was not in the recording")


def test_a_real_models_recorded_answers_replay_through_the_scenario_eval(tmp_path: Path) -> None:
    report = json.loads((REAL / "report.json").read_text(encoding="utf-8"))
    cache = tmp_path / "calls.db"
    shutil.copyfile(REAL / "calls.db", cache)
    answer = CachedChatModel(Recorded(report["model"]), cache, mode="replay")
    scenario = load_scenario(next(p for p in bundled_scenarios() if p.stem == report["scenario"]))
    row, = evaluate_scenarios([scenario], ["full"], report["budget"], models(answer), progress=False)
    recorded = report["answers"]["full"]
    assert {q["id"]: {"answer": q["answer"], "passed": q["passed"]} for q in row["questions"]} == recorded
    assert answer.usage.by_purpose[prompts.SCENARIO_ANSWER_PURPOSE].cache_hits == len(recorded)
    # what this 1.5B model did with a 300-token memory: it says it does not know when memory lacks the fact
    # (the birthday cut from full's window), and answers the one-off override from the session's history
    said = {k: v["answer"] for k, v in recorded.items()}
    assert said["q-birthday"] == "I don't know" and "8:30" in said["q-tomorrow-time"]

"""The paper's measures of what emerged, model-free from a run, and their command."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.sim import RunConfig, RunDir, fork_run, measures, start_run
from memstream.sim.events import read_events

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)
FACT = "Valentine's Day party"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "town"
    start_run(RunConfig(start=START, hours=14, embedder="hash"), out, progress=False)
    return out


@pytest.mark.slow
def test_diffusion_grows_hour_by_hour_and_each_knower_is_backed_by_a_memory(run_dir: Path) -> None:
    with RunDir.open(run_dir) as run:
        result = measures.diffusion(run, FACT)
        shares = [h["share"] for h in result["by_hour"]]
        assert result["by_hour"][0]["time"] == START.isoformat() and len(shares) == 15
        assert shares == sorted(shares) and 0 < shares[0] < shares[-1] == result["final_share"]
        for agent, ids in result["evidence"].items():
            texts = [run.stream.get(agent, i).text.lower() for i in ids]
            assert texts and all("valentine" in t and "party" in t for t in texts)
        assert set(result["by_hour"][-1]["agents"]) == set(result["evidence"])


@pytest.mark.slow
def test_the_network_grows_and_every_edge_has_a_memory_naming_the_other(run_dir: Path) -> None:
    with RunDir.open(run_dir) as run:
        result = measures.network(run)
        assert result["agents"] == 25 and 0 < result["density_start"] < result["density_end"] <= 1
        assert len(result["edges_end"]) == round(result["density_end"] * 25 * 24 / 2)
        for link, memory_id in list(result["evidence"].items())[:50]:
            who, whom = link.split(" -> ")
            assert whom in run.stream.get(who, memory_id).text


@pytest.mark.slow
def test_attendance_is_who_the_event_log_puts_there(run_dir: Path) -> None:
    start, end = START.replace(hour=12), START.replace(hour=13)
    with RunDir.open(run_dir) as run:
        result = measures.attendance(run, "hobbs cafe", start, end, invited_fact=FACT)
    assert result["place"] == "Hobbs Cafe" and "Isabella Rodriguez" in result["present"]
    seen = {e["agent"] for e in read_events(run_dir / "events.jsonl")
            if e["location"] == "Hobbs Cafe" and start <= datetime.fromisoformat(e["time"]) < end}
    assert seen <= set(result["present"])
    assert result["attended_and_knew"] == len(set(result["present"]) & set(result["knew"]))


@pytest.mark.slow
def test_the_measure_command_writes_json_and_a_plot(run_dir: Path, tmp_path: Path, capsys) -> None:
    out, plot = tmp_path / "d.json", tmp_path / "d.png"
    assert main(["measure", "diffusion", str(run_dir), "--fact", FACT, "--json", str(out), "--plot", str(plot)]) == 0
    data = json.loads(out.read_text())
    assert {"fact", "agents", "by_hour", "final_share"} <= set(data) and plot.stat().st_size > 5000
    assert {"time", "knowers", "share"} <= set(data["by_hour"][0])
    assert main(["measure", "network", str(run_dir), str(run_dir), "--json", str(out), "--plot", str(plot)]) == 0
    both = json.loads(out.read_text())
    assert len(both) == 2 and {"agents", "density_start", "density_end", "edges_end"} <= set(both[0])
    assert main(["measure", "attendance", str(run_dir), "--place", "Hobbs Cafe", "--from", "2023-02-13T12:00-08:00",
                 "--to", "2023-02-13T13:00-08:00", "--invited-fact", FACT, "--json", str(out)]) == 0
    assert {"place", "from", "to", "present", "knew", "attended_and_knew", "planned", "planned_and_came"} <= set(
        json.loads(out.read_text()))
    assert "Hobbs Cafe" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize(("argv", "problem"), [
    (["measure", "diffusion", "{tmp}", "--fact", "x"], "not a run directory"),
    (["measure", "diffusion", "{run}", "--fact", "the of and"], "no words to look for"),
    (["measure", "attendance", "{run}", "--place", "the Moon", "--from", "2023-02-13T12:00-08:00",
      "--to", "2023-02-13T13:00-08:00"], "not a building"),
    (["measure", "attendance", "{run}", "--place", "Hobbs Cafe", "--from", "2023-03-13T12:00-08:00",
      "--to", "2023-03-13T13:00-08:00"], "outside the run"),
    (["measure", "attendance", "{run}", "--place", "Hobbs Cafe", "--from", "2023-02-13T13:00-08:00",
      "--to", "2023-02-13T12:00-08:00"], "must come after"),
    (["measure", "network", "{run}", "--plot", "{tmp}/n.gif"], "must end in .png or .svg"),
])
def test_bad_measure_input_is_one_line_and_writes_nothing(run_dir: Path, tmp_path: Path, capsys, argv: list[str],
                                                          problem: str) -> None:
    out = tmp_path / "out.json"
    code = main([a.format(tmp=tmp_path, run=run_dir) for a in argv] + ["--json", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and problem in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


# -- whisper, fork, scenarios, ablations, interviews -------------------------------------------------

def small_run(out: Path, **kw) -> Path:
    start_run(RunConfig(**({"agents": 4, "start": START, "hours": 1, "embedder": "hash", "keep_every": 1} | kw)),
              out, progress=False)
    return out


@pytest.mark.slow
def test_a_whisper_is_carried_when_the_run_goes_on(tmp_path: Path, capsys) -> None:
    run = small_run(tmp_path / "r")
    text = "Klaus Mueller is organising a study group at College Library tomorrow at 10 am"
    assert main(["whisper", str(run), "--agent", "Klaus Mueller", text]) == 0
    assert main(["run", "--resume", str(run), "--hours", "1.5"]) == 0
    from memstream.stream import MemoryStream
    with MemoryStream(run / "streams.db", create=False, readonly=True) as stream:
        [m] = [m for m in stream.memories("Klaus Mueller") if m.text == text]
    assert m.kind == "thought" and m.metadata["whisper"] == 1 and m.created_at == START + timedelta(hours=1, seconds=10)
    capsys.readouterr()
    before = (run / "whispers.json").read_text()
    for argv, problem in ((["--agent", "Nobody", "hi"], "unknown agent"),
                          (["--agent", "Klaus Mueller", "hi", "--at", "2023-02-13T06:30-08:00"], "its past is fixed"),
                          (["--agent", "Klaus Mueller", " "], "bad whisper")):
        assert main(["whisper", str(run), *argv]) == 2
        err = capsys.readouterr().err
        assert problem in err and len(err.strip().splitlines()) == 1
    assert (run / "whispers.json").read_text() == before


def test_writing_straight_into_a_runs_stream_is_refused(tmp_path: Path, capsys) -> None:
    run = small_run(tmp_path / "r")
    before = (run / "streams.db").read_bytes()
    assert main(["add", str(run / "streams.db"), "--agent", "Klaus Mueller", "--text", "hi", "--importance", "3"]) == 2
    assert "memstream whisper" in capsys.readouterr().err and (run / "streams.db").read_bytes() == before


@pytest.mark.slow
def test_a_fork_of_the_same_settings_retraces_the_run_and_leaves_it_untouched(tmp_path: Path, capsys) -> None:
    whole = small_run(tmp_path / "whole", hours=2)
    before = {p.name: p.read_bytes() for p in whole.iterdir() if p.is_file()}
    assert main(["run", "--fork", f"{whole}@2023-02-13T07:00:00-08:00", "--hours", "1", "--out",
                 str(tmp_path / "fork")]) == 0
    assert (tmp_path / "fork" / "events.jsonl").read_text() == (whole / "events.jsonl").read_text()
    assert {p.name: p.read_bytes() for p in whole.iterdir() if p.is_file()} == before
    config = json.loads((tmp_path / "fork" / "config.json").read_text())
    assert config["forked_from"].endswith("@2023-02-13T07:00:00-08:00") and config["hours"] == 2
    assert main(["run", "--fork", str(whole), "--hours", "1", "--ablate", "reflection,planning",
                 "--out", str(tmp_path / "ablated")]) == 0
    assert json.loads((tmp_path / "ablated" / "config.json").read_text())["ablate"] == ["planning", "reflection"]
    capsys.readouterr()
    assert main(["run", "--fork", f"{whole}@2023-02-13T06:30:00-08:00", "--out", str(tmp_path / "x")]) == 2
    assert "fork points: 2023-02-13T06:00:00-08:00, 2023-02-13T07:00:00-08:00" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_a_forks_metrics_count_its_own_wall_time_and_steps(tmp_path: Path) -> None:
    whole = small_run(tmp_path / "whole", hours=2)
    point = whole / "checkpoint" / f"t{int(START.timestamp()) + 3600}" / "state.json"
    state = json.loads(point.read_text())
    state["wall_s"] = 1e6  # as if the source had taken a long time to get there
    point.write_text(json.dumps(state))
    fork_run(whole, tmp_path / "fork", at=START + timedelta(hours=1), hours=1, progress=False)
    metrics = json.loads((tmp_path / "fork" / "metrics.json").read_text())
    assert metrics["wall_s"] < 1e5 and metrics["agent_steps"] == 4 * 720
    assert abs(metrics["agent_steps_per_s"] * metrics["wall_s"] - 4 * 360) < 0.1 * 4 * 360  # the fork's own hour
    fork_run(tmp_path / "fork", tmp_path / "fork2", hours=0.5, progress=False)  # a fork of a fork: its own again
    again = json.loads((tmp_path / "fork2" / "metrics.json").read_text())
    assert again["wall_s"] < 1e5 and again["agent_steps"] == 4 * 900


def test_the_valentine_scenario_whispers_its_set_up(tmp_path: Path) -> None:
    out = tmp_path / "v"
    assert main(["run", "--scenario", "valentine", "--hours", "0.5", "--embedder", "hash", "--out", str(out)]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["scenario"] == "valentine" and config["start"] == "2023-02-13T06:00:00-08:00"
    heard = [e for e in read_events(out / "events.jsonl") if e["action"].startswith("hears a whisper")]
    assert {e["agent"] for e in heard} == {"Isabella Rodriguez", "Sam Moore"}


@pytest.mark.parametrize(("text", "problem"), [
    ("name: x\nhours: 2\n", "start"),
    ("name: x\nstart: 2023-02-13T06:00:00\nhours: 2\n", "zone"),
    ("name: x\nstart: 2023-02-13T06:00:00-08:00\nhours: 2\nwhispers:\n- {agent: Nobody, text: hi}\n",
     "not one of the run's agents"),
    ("name: x\nstart: 2023-02-13T06:00:00-08:00\nhours: 2\nwhispers:\n- {agent: Sam Moore, text: hi, "
     "at: '2023-03-01T06:00:00-08:00'}\n", "outside the scenario"),
    ("name: [unclosed\n", "not valid YAML"),
])
def test_a_bad_scenario_is_one_line_and_writes_nothing(tmp_path: Path, capsys, text: str, problem: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert main(["run", "--scenario", str(path), "--embedder", "hash", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_ablations_take_the_module_away(tmp_path: Path, capsys) -> None:
    out = small_run(tmp_path / "a", hours=2, ablate=["observation", "reflection", "planning"])
    from memstream.stream import MemoryStream
    with MemoryStream(out / "streams.db", create=False, readonly=True) as stream:
        kinds = {m.kind for o in stream.owners() for m in stream.memories(o)}
    assert kinds == {"identity"}  # only what the agents started with
    metrics = json.loads((out / "metrics.json").read_text())
    assert not any(p.startswith(("planning", "reflection")) for p in metrics["usage"])
    assert main(["run", "--ablate", "memory", "--hours", "1", "--out", str(tmp_path / "b")]) == 2
    assert "unknown ablation 'memory'" in capsys.readouterr().err and not (tmp_path / "b").exists()


def test_an_interview_battery_lists_the_memories_of_each_answer(tmp_path: Path, capsys, monkeypatch) -> None:
    run = small_run(tmp_path / "r")
    out = tmp_path / "answers.json"
    assert main(["interview", str(run), "--agent", "Klaus Mueller", "--questions", "bundled", "--json", str(out)]) == 0
    answers = json.loads(out.read_text())
    assert {a["category"] for a in answers} == {"self-knowledge", "memory", "plans", "reactions", "reflections"}
    assert all("{" not in a["question"] and a["memory_ids"] and a["answer"] for a in answers)
    assert any("Maria Lopez" in a["question"] for a in answers)  # {other}: someone Klaus knows
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("Who are you?\nAnd what do you do?\n\n"))
    capsys.readouterr()
    assert main(["interview", str(run), "--agent", "Klaus Mueller", "--remember"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("Klaus Mueller: ") == 2 and "shown memories" in printed
    assert len(json.loads((run / "whispers.json").read_text())) == 2  # remembered, through the run


@pytest.mark.slow
def test_an_interview_conversation_shows_the_model_what_was_said(tmp_path: Path) -> None:
    from memstream.models import run_direct
    from memstream.sim import RunDir
    from memstream.sim.talk.interview import interview_stage
    from memstream.testing import ScriptedChat

    with RunDir.open(small_run(tmp_path / "r")) as run:
        town, stream = run.town, run.stream
        chat = ScriptedChat({"interview": lambda m: "I bake bread."})
        run_direct(interview_stage(stream, town.residents[0], "What next?", START, history=[("Hi?", "Hello.")]), chat)
    prompt = chat.calls[-1][1][-1]["content"]
    assert "Earlier in this interview:\nInterviewer: Hi?\n" in prompt and prompt.index("Hi?") < prompt.index("What next?")


@pytest.mark.slow
def test_interviews_measure_every_agent_and_a_judge_scores_them(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "i.json"
    assert main(["measure", "interviews", str(run_dir), "--judge", "offline", "--json", str(out), "--plot",
                 str(tmp_path / "i.png")]) == 0
    answers = json.loads(out.read_text())
    assert len(answers) == 25 * 10 and {"agent", "category", "question", "answer", "memory_ids", "score"} <= set(
        answers[0])
    assert main(["measure", "diffusion", str(run_dir), "--fact", FACT, "--llm", "offline", "--json", str(out)]) == 0
    asked = json.loads(out.read_text())["by_interview"]
    assert asked["hallucinated"] == [] and set(asked["agents"]) | set(asked["missed"]) >= set(asked["agents"])


@pytest.mark.parametrize("text", ["[]", "{}", "plans: 3\n", "x:\n- ''\n", "x:\n- Who is {nobody}?\n"])
def test_a_bad_battery_is_one_line(tmp_path: Path, capsys, text: str) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(text)
    assert main(["measure", "interviews", str(tmp_path), "--battery", str(path)]) == 2
    err = capsys.readouterr().err
    assert "battery" in err or "field" in err, err
    assert len(err.strip().splitlines()) == 1

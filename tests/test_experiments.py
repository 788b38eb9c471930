"""The paper's measures of what emerged, model-free from a run, and their command."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.sim import measures
from memstream.sim.events import read_events
from memstream.sim.run import RunConfig, start_run

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)
FACT = "Valentine's Day party"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "town"
    start_run(RunConfig(start=START, hours=14, embedder="hash"), out, progress=False)
    return out


def test_diffusion_grows_hour_by_hour_and_each_knower_is_backed_by_a_memory(run_dir: Path) -> None:
    with measures.open_run(run_dir) as run:
        result = measures.diffusion(run, FACT)
        shares = [h["share"] for h in result["by_hour"]]
        assert result["by_hour"][0]["time"] == START.isoformat() and len(shares) == 15
        assert shares == sorted(shares) and 0 < shares[0] < shares[-1] == result["final_share"]
        for agent, ids in result["evidence"].items():
            texts = [run.stream.get(agent, i).text.lower() for i in ids]
            assert texts and all("valentine" in t and "party" in t for t in texts)
        assert set(result["by_hour"][-1]["agents"]) == set(result["evidence"])


def test_the_network_grows_and_every_edge_has_a_memory_naming_the_other(run_dir: Path) -> None:
    with measures.open_run(run_dir) as run:
        result = measures.network(run)
        assert result["agents"] == 25 and 0 < result["density_start"] < result["density_end"] <= 1
        assert len(result["edges_end"]) == round(result["density_end"] * 25 * 24 / 2)
        for link, memory_id in list(result["evidence"].items())[:50]:
            who, whom = link.split(" -> ")
            assert whom in run.stream.get(who, memory_id).text


def test_attendance_is_who_the_event_log_puts_there(run_dir: Path) -> None:
    start, end = START.replace(hour=12), START.replace(hour=13)
    with measures.open_run(run_dir) as run:
        result = measures.attendance(run, "hobbs cafe", start, end, invited_fact=FACT)
    assert result["place"] == "Hobbs Cafe" and "Isabella Rodriguez" in result["present"]
    seen = {e["agent"] for e in read_events(run_dir / "events.jsonl")
            if e["location"] == "Hobbs Cafe" and start <= datetime.fromisoformat(e["time"]) < end}
    assert seen <= set(result["present"])
    assert result["attended_and_knew"] == len(set(result["present"]) & set(result["knew"]))


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
    assert {"place", "from", "to", "present", "knew", "attended_and_knew"} <= set(json.loads(out.read_text()))
    assert "Hobbs Cafe" in capsys.readouterr().out


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

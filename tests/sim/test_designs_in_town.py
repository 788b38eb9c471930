"""The town on any memory design (``memstream run --design D``): every design runs a town offline to the end,
a run on a design resumes exactly, the floor remembers less than the stream where it shows, bad input is refused."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.designs import DESIGNS, RecentConfig, RecentDesign, entry, kept_designs, open_design
from memstream.models import OfflineChatModel
from memstream.sim import RunConfig, RunDir, RunFiles, load_scenario, resume_run, start_run
from memstream.sim.agents import Whisper
from memstream.sim.analysis import measures
from memstream.sim.memory import STREAM_DESIGN, bedtime_in
from memstream.sim.run.layout import DESIGN_STORE
from tests.helpers import contents

TZ = timezone(timedelta(hours=-8))
START = datetime(2023, 2, 13, 6, tzinfo=TZ)


def config(**kw) -> RunConfig:
    return RunConfig(**({"agents": 4, "start": START, "hours": 2, "embedder": "hash", "seed": 1} | kw))


def design_rows(run: Path) -> tuple[list[tuple], list[tuple]]:
    """Every record (bar its id: a process takes ids from the store in blocks, unique, not contiguous) and document
    the run's design store holds as rows, in order."""
    with closing(sqlite3.connect(run / DESIGN_STORE)) as db:
        return (db.execute("SELECT seq, key, extra FROM design_records ORDER BY seq").fetchall(),
                db.execute("SELECT * FROM design_docs ORDER BY 1, 2, 3").fetchall())


def entries_kept(run: Path, name: str) -> int:
    """The entries the run's design holds for all its agents, asked through the design (rows or its own file)."""
    with open_design(name, store=RunFiles(run).design_store, read_only=True) as bound:
        return sum(len(list(bound.export(owner))) for owner in bound.owners())


@pytest.mark.slow
@pytest.mark.parametrize("name", [STREAM_DESIGN, *(d for d in DESIGNS if d != STREAM_DESIGN)])
def test_every_design_runs_a_small_town_offline_to_the_end(tmp_path: Path, name: str) -> None:
    out = tmp_path / "run"
    if name not in kept_designs():  # a design that cannot be kept in a store yet is refused, nothing written
        assert main(["run", "--agents", "4", "--hours", "2", "--embedder", "hash", "--design", name,
                     "--out", str(out)]) == 2
        assert not out.exists()
        return
    result = start_run(config(design=name), out, progress=False)
    assert result.stopped == "finished" and result.metrics["memory"]["design"] == name
    assert result.metrics["memories"] > 0
    if name != STREAM_DESIGN:  # every agent recalled through the design, and wrote its memories into it
        assert result.metrics["memory"]["contexts"] > 0
        # (the offline profile rules find nothing to keep in a town's observations: its contexts stay empty, a
        # gap of the town on the profile design said in #41's note)
        assert result.metrics["memory"]["context_tokens"] > 0 or name == "profile"
        assert entries_kept(out, name) == result.metrics["memories"]  # one entry per memory the town wrote
    else:
        assert not (out / DESIGN_STORE).exists()


@pytest.mark.slow
def test_a_run_on_a_design_stopped_and_resumed_equals_the_unbroken_run(tmp_path: Path) -> None:
    """buffer-summary rewrites its summaries as it goes: only a store put back as it was resumes exactly."""
    settings_ = {"design": "buffer-summary", "design_config": {"turns": 6, "batch": 3}}
    whole = start_run(config(**settings_), tmp_path / "whole", progress=False)
    part = start_run(config(**settings_, max_calls=whole.metrics["model_calls"] // 2), tmp_path / "part",
                     progress=False)
    assert part.stopped == "max-calls"
    while resume_run(tmp_path / "part", progress=False).stopped != "finished":
        pass
    assert contents(tmp_path / "part") == contents(tmp_path / "whole")
    assert design_rows(tmp_path / "part") == design_rows(tmp_path / "whole")


FACT = "Valentine's Day party"


@pytest.fixture(scope="module")
def party(tmp_path_factory) -> dict[str, Path]:
    """A shrunk valentine (8 agents, 8 hours, only Isabella's whisper), on the stream and on the floor."""
    scenario = load_scenario("valentine")
    told = scenario.whispers[0]
    runs = {}
    for design in (STREAM_DESIGN, "recent"):
        runs[design] = out = tmp_path_factory.mktemp(design) / "run"
        start_run(RunConfig(town=scenario.town, agents=8, start=scenario.start, hours=8, embedder="hash",
                            design=design), out, progress=False,
                  whispers=[Whisper(id=1, agent=told.agent, text=told.text, at=scenario.start)])
    return runs


@pytest.mark.slow
def test_the_floor_knows_less_of_a_told_event_than_the_stream_hour_by_hour(party: dict[str, Path]) -> None:
    """Recalling only its last few records, Isabella's news is gone from her mind before she meets anyone: she
    heard it (the record says so) and does not know it (her memory, asked, does not give it back)."""
    with RunDir.open(party[STREAM_DESIGN]) as s, RunDir.open(party["recent"]) as f:
        stream, floor = measures.diffusion(s, FACT)["by_hour"], measures.diffusion(f, FACT)["by_hour"]
    assert len(stream) == len(floor) == 9  # the floor's memory asked at every hour, as the stream's
    knew = [(a["knowers"], b["knowers"]) for a, b in zip(stream, floor, strict=True)]
    assert all(a >= b for a, b in knew) and knew[-1][0] > knew[-1][1]
    assert all(h["knowers"] <= h["heard"] for h in stream + floor)
    assert floor[-1]["heard"] > floor[-1]["knowers"]  # heard, and forgot


@pytest.mark.slow
def test_what_an_agent_knows_is_asked_of_its_design_what_happened_is_read_from_the_record(
        party: dict[str, Path]) -> None:
    with RunDir.open(party[STREAM_DESIGN]) as s, RunDir.open(party["recent"]) as f:
        asked = {name: measures.diffusion_by_interview(run, FACT, OfflineChatModel()) for name, run in
                 ((STREAM_DESIGN, s), ("recent", f))}
        assert asked["recent"]["knowers"] < asked[STREAM_DESIGN]["knowers"]
        assert not asked["recent"]["hallucinated"] and not asked["recent"]["missed"]  # checked against the design
        window = (s.config.start + timedelta(hours=7), s.end)
        came = {name: measures.attendance(run, "Hobbs Cafe", *window, FACT) for name, run in
                ((STREAM_DESIGN, s), ("recent", f))}
        assert len(came["recent"]["knew"]) < len(came[STREAM_DESIGN]["knew"])  # knowing: the memory, at --from
        assert set(came["recent"]["present"]) | set(came[STREAM_DESIGN]["present"])  # who came: the event log
        net = measures.network(f)
        assert net["density_end"] <= net["density_end_heard"] and net["by_hour"][-1]["heard"] > 0
        # a design's memory is kept at every simulated hour (recall points), its fork points stay the kept ones
        assert len(f.checkpoints.recall_points()) == 9 and len(f.checkpoints.times()) < 9
        assert s.checkpoints.recall_points() == {}


@pytest.mark.slow
def test_a_query_blind_designs_context_is_assembled_once_an_hour_for_the_measures(
        party: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The network asks every agent about every other: on the floor (the same context whatever it is asked) each
    agent's context is assembled once per recall point, and the measures come out as when every query asks."""
    def measured() -> tuple[dict, int]:
        asked = []
        real = RecentDesign.context
        monkeypatch.setattr(RecentDesign, "context", lambda self, *a: asked.append(a) or real(self, *a))
        with RunDir.open(party["recent"]) as run:
            out = {"network": measures.network(run), "diffusion": measures.diffusion(run, FACT)}
        monkeypatch.setattr(RecentDesign, "context", real)
        return out, len(asked)

    reused, assembled = measured()
    monkeypatch.setattr(RecentDesign, "reads_query", True)  # as if each query could change what it gives
    every, asked = measured()
    assert reused == every
    hours, agents = len(every["network"]["by_hour"]), 8
    assert asked == hours * (agents * (agents - 1) + agents) and assembled <= hours * agents * 2


@pytest.mark.parametrize("args, says", [
    (["--design", "nope"], "unknown design 'nope'"),
    (["--design", "recent", "--design-config", "records=0"], "records"),
    (["--design", "recent", "--design-config", "bogus=1"], "bogus"),
    (["--design-config", "records=3"], "the stream design is the town's own stream"),
    (["--design", "recent", "--reconfigure"], "drop --reconfigure"),
])
def test_bad_design_input_is_one_line_exit_2_nothing_written(tmp_path: Path, capsys, args: list[str],
                                                            says: str) -> None:
    out = tmp_path / "run"
    assert main(["run", "--agents", "2", "--hours", "1", "--embedder", "hash", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_resuming_with_a_design_or_forking_into_bad_settings_is_refused(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    start_run(config(design="recent", hours=1, agents=2), out, progress=False)
    before = contents(out)
    for again in (["--design", "full"], ["--design", "nope"], ["--design-config", "records=3"]):
        assert main(["run", "--resume", str(out), *again]) == 2
        err = capsys.readouterr().err
        assert "keeps the memory design it started with" in err and len(err.strip().splitlines()) == 1
    for bad in (["--design", "nope"], ["--design", "full", "--design-config", "turns=3"],
                ["--design", "recent", "--design-config", "records=0"], ["--design-config", "bogus=1"]):
        assert main(["run", "--fork", str(out), *bad, "--out", str(tmp_path / "fork")]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert contents(out) == before and not (tmp_path / "fork").exists()


@pytest.mark.slow
@pytest.mark.parametrize("source, into", [(STREAM_DESIGN, "recent"), ("buffer-summary", "vector"),
                                          ("full", STREAM_DESIGN)])
def test_a_fork_goes_on_from_the_same_morning_with_another_memory(tmp_path: Path, source: str, into: str) -> None:
    start_run(config(design=source, keep_every=1), tmp_path / "source", progress=False)
    at = (START + timedelta(hours=1)).isoformat()
    assert main(["run", "--fork", f"{tmp_path / 'source'}@{at}", "--design", into, "--out",
                 str(tmp_path / "fork")]) == 0
    fork = RunDir.open(tmp_path / "fork")
    assert fork.config.design == into and fork.config.design_config == {}
    memories = fork.records.metrics()["memories"]
    if into == STREAM_DESIGN:
        assert not (tmp_path / "fork" / DESIGN_STORE).exists()
    else:  # every memory of the shared past and of the fork's own hour is in the new design
        assert entries_kept(tmp_path / "fork", into) == memories


@settings(max_examples=25, deadline=None)
@given(texts=st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
                              max_size=30).filter(str.strip), max_size=15),
       keep=st.integers(1, 6))
def test_the_floor_recalls_only_its_newest_records_whatever_it_is_asked(texts: list[str], keep: int) -> None:
    design = RecentDesign(RecentConfig(records=keep))
    at = [START + timedelta(minutes=i) for i in range(len(texts))]
    ids = design.write("ann", [entry(text=t, at=a) for t, a in zip(texts, at, strict=True)])
    context = design.context("ann", "anything at all", START + timedelta(days=1), 10_000)
    assert context.ids == set(ids[-keep:])


@settings(max_examples=25, deadline=None)
@given(hour=st.integers(0, 23), minute=st.integers(0, 59), step=st.sampled_from([45, 60, 90, 600, 3600]),
       offset=st.integers(0, 3599))
def test_a_bedtime_falls_in_exactly_one_step_of_a_day(hour: int, minute: int, step: int, offset: int) -> None:
    first = START + timedelta(seconds=offset % step)
    ticks = [first + timedelta(seconds=step * i) for i in range(1, 24 * 3600 // step + 1)]
    assert sum(bedtime_in(f"{hour:02d}:{minute:02d}", t, step) for t in ticks) == 1


@pytest.mark.slow
def test_a_design_does_its_upkeep_at_each_agents_bedtime_counted_in_the_metrics(tmp_path: Path) -> None:
    start = START.replace(hour=21, minute=30)
    result = start_run(config(design="buffer-summary", design_config={"turns": 4, "batch": 2}, start=start),
                       tmp_path / "run", progress=False)
    beds = [r for r in RunDir.open(tmp_path / "run").town.residents
            if any(bedtime_in(r.sleep, start + timedelta(seconds=10 * i), 10) for i in range(1, 721))]
    assert beds and result.metrics["memory"]["consolidations"] == len(beds)


# -- kill -9 at a random point, resumed: the unbroken run, byte for byte, on every design ----------------------

KILL_AT = """
import os, signal, sys
from memstream.cli import main
from memstream.models import OfflineChatModel

at, calls, original = int(sys.argv[1]), [0], OfflineChatModel._generate

def killed(self, *args):
    calls[0] += 1
    if calls[0] == at:  # in the middle of whatever the town is doing: a step, a design's write, its upkeep
        os.kill(os.getpid(), signal.SIGKILL)
    return original(self, *args)

OfflineChatModel._generate = killed
sys.exit(main(sys.argv[2:]))
"""


def own_files(run: Path) -> dict[str, list[str]]:
    """A design's own files beside its store (facts' database), each as the SQL that makes it again."""
    out = {}
    for path in RunFiles(run).design_files():
        if path.name != DESIGN_STORE:
            with closing(sqlite3.connect(path)) as db:
                out[path.name] = list(db.iterdump())
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", [d for d in kept_designs() if d != STREAM_DESIGN])
def test_a_run_on_any_design_killed_at_a_random_point_resumes_to_the_unbroken_run(tmp_path: Path, name: str) -> None:
    """A real kill -9 of `memstream run --design D` at a model call drawn at random (fixed per design, said on
    failure), before or after its first checkpoint; resumed, it equals the uninterrupted run: the event log, the
    record's rows, the design store's rows and the design's own files."""
    import random
    import subprocess
    import sys
    import zlib

    hours, agents = 2, 3
    whole = start_run(config(design=name, hours=hours, agents=agents, seed=2), tmp_path / "whole", progress=False)
    at = random.Random(zlib.crc32(name.encode())).randint(1, whole.metrics["model_calls"] - 1)
    out = tmp_path / "run"
    argv = ["run", "--agents", str(agents), "--hours", str(hours), "--seed", "2", "--embedder", "hash",
            "--start", START.isoformat(), "--design", name, "--out", str(out)]
    killed = subprocess.run([sys.executable, "-c", KILL_AT, str(at), *argv], capture_output=True, text=True,
                            timeout=300)
    assert killed.returncode == -9, f"call {at}: {killed.stderr[-400:]}"
    assert main(["run", "--resume", str(out)]) == 0
    said = f"killed at model call {at} of {whole.metrics['model_calls']}"
    assert contents(out) == contents(tmp_path / "whole"), said
    assert design_rows(out) == design_rows(tmp_path / "whole"), said
    assert own_files(out) == own_files(tmp_path / "whole"), said

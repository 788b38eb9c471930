"""A study across memory designs: the shipped study file, what each run's memory cost, and the measures drawn
against a cost per design (no Ray here: a run measured and costed as a sweep's task does it)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.designs import kept_designs
from memstream.sim import RunConfig, start_run
from memstream.sweep import load_spec
from memstream.sweep.spec import SweepSpec
from memstream.sweep.study import aggregate, cost, measure

EXAMPLES = Path(__file__).resolve().parents[2] / "memstream" / "examples"
STUDY = EXAMPLES / "designs-valentine.yaml"
#: The same study, one seed, to the party's evening: what made the README's table (designs_valentine.json).
QUICK = EXAMPLES / "designs-valentine-quick.yaml"
START = datetime(2023, 2, 13, 6, tzinfo=timezone(timedelta(hours=-8)))


def test_the_shipped_study_runs_the_valentine_scenario_on_every_kept_design() -> None:
    spec = load_spec(STUDY)  # every run's settings checked, as `memstream sweep` checks them before any runs
    assert spec.base["scenario"] == "valentine"
    assert set(spec.grid["design"]) == set(kept_designs()) and len(spec.grid["seed"]) == 2
    assert {next(iter(m)) for m in spec.measures} == {"diffusion", "network", "attendance"}


def test_the_quick_study_is_the_full_one_with_one_seed_to_the_partys_evening() -> None:
    full, quick = load_spec(STUDY), load_spec(QUICK)
    assert quick.measures == full.measures and quick.grid == {**full.grid, "seed": [0]}
    assert quick.base == {**full.base, "hours": 38}  # from 06:00 on the 13th to 20:00 on the 14th: the party's 17-19 h


@pytest.mark.slow
def test_a_design_run_is_costed_and_its_measures_drawn_against_the_cost(tmp_path: Path, capsys) -> None:
    spec = SweepSpec(grid={"design": ["stream", "recent"]}, measures=[{"diffusion": {"fact": "breakfast"}},
                                                                       {"network": {}}])
    runs = []
    for design in spec.grid["design"]:
        folder = tmp_path / "runs" / design
        start_run(RunConfig(agents=3, start=START, hours=1, embedder="hash", design=design), folder, progress=False)
        runs.append({"run": design, "params": {"design": design}, "measures": measure(folder, spec), "metrics": {},
                     "cost": cost(folder)})
    stream, floor = (r["cost"] for r in runs)
    assert stream.keys() | {"context_tokens_per_recall"} == floor.keys()  # the stream's recalls are not metered
    assert all(c["calls_per_agent_step"] > 0 and c["store_bytes_per_agent"] > 0 for c in (stream, floor))
    cells = aggregate(spec, runs)
    assert [c["cost"]["store_bytes_per_agent"]["values"] for c in cells] == [[stream["store_bytes_per_agent"]],
                                                                             [floor["store_bytes_per_agent"]]]
    (tmp_path / "results.json").write_text(json.dumps(cells))
    for against in ("calls_per_agent_step", "store_bytes_per_agent"):
        assert main(["plot", "sweep", str(tmp_path), "--against", against, "-o", str(tmp_path / f"{against}.png")]) == 0
        assert (tmp_path / f"{against}.png").stat().st_size > 0
    capsys.readouterr()
    assert main(["plot", "sweep", str(tmp_path), "--against", "vibes", "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "no cost 'vibes'" in err and len(err.strip().splitlines()) == 1

"""A sweep's spec refused whole, before any worker starts: a --max-runs past the maximum, a grid naming a
town file that is missing or damaged, and a grid's ``rec=1,imp=2`` weights read as the CLI reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.cli.weights import WeightSpec
from memstream.errors import MemstreamError
from memstream.stream import Weights
from memstream.sweep import load_spec
from memstream.sweep.spec import MAX_RUNS, SweepSpec, config_of

BASE = {"agents": 4, "hours": 1, "embedder": "hash"}


def spec_file(tmp_path: Path, grid: dict) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"base": BASE, "grid": grid, "measures": [{"network": {}}]}))
    return path


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(min_value=MAX_RUNS + 1, max_value=10**30))
def test_max_runs_past_the_maximum_is_refused_in_one_line(tmp_path: Path, capsys, max_runs: int) -> None:
    out = tmp_path / "out"
    assert main(["sweep", str(spec_file(tmp_path, {"seed": [0, 1]})), "--out", str(out),
                 "--max-runs", str(max_runs)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"maximum of {MAX_RUNS:,}" in err, err
    assert not out.exists()


@pytest.mark.parametrize("town", ["missing.yaml", ".", "/dev/null", "damaged.yaml"])
def test_a_town_file_in_the_grid_is_checked_before_any_run(tmp_path: Path, capsys, town: str) -> None:
    (tmp_path / "damaged.yaml").write_text("areas: [unclosed\n")
    named = town if town.startswith("/") else str(tmp_path / town)
    out = tmp_path / "out"
    assert main(["sweep", str(spec_file(tmp_path, {"town": [None, named]})), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert not out.exists()


COMPONENTS = st.sampled_from(["rec", "imp", "rel", "time", "recency", "importance", "relevance", "REC"])


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(COMPONENTS, st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1,
                       max_size=4).filter(lambda d: len({k.lower()[:3] for k in d}) == len(d)))
def test_grid_weights_read_the_named_form_as_the_cli_does(weights: dict[str, float]) -> None:
    text = ",".join(f"{k}={v!r}" for k, v in weights.items())
    spec = SweepSpec(base=BASE, grid={"weights": [text]})
    config, _ = config_of(spec, spec.cells()[0])
    assert config.weights == Weights(**WeightSpec()(text))


@pytest.mark.parametrize("text", ["rec=x", "rec=1,bogus=2", "rec=1,1", "rec=1,rec=2", "rec=-1"])
def test_bad_grid_weights_are_one_line(tmp_path: Path, text: str) -> None:
    with pytest.raises(MemstreamError, match="bad setting"):
        load_spec(spec_file(tmp_path, {"weights": [text]}))

"""The benchmarks' results files: each matches its schema, the results page shows each, no page types a figure.

``benchmarks/results/NAME.json`` is written by a benchmark's ``--results`` (benchmarks/result_file.py) and
rendered into the docs' results page by scripts/mkdocs_hooks.py; a ``[results: NAME](...)`` line in a page
becomes NAME's table. These tests hold the files, the writer and the renderer without building the site.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from datetime import date
from pathlib import Path
from types import ModuleType

import pytest
from mkdocs.exceptions import PluginError

from tests.helpers import ROOT

RESULTS = ROOT / "benchmarks" / "results"
#: The pages whose measured tables come from results files (the README is the site's home page).
PAGES = [ROOT / "README.md", *(ROOT / "docs" / f"{page}.md" for page in (
    "benchmarks", "memory", "designs", "facts", "models", "service", "trust", "experiments", "watching"))]
#: The tables these pages may still type: what things are, not what was measured (their header rows).
DESCRIPTIVE = {"| design | what the model sees | consolidation | source |", "| spec | what it is |",
               "| call | what | client |", "| page | what it tells |"}


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rf() -> ModuleType:
    return _load("result_file", ROOT / "benchmarks" / "result_file.py")


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    return _load("memstream_mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")


def files() -> list[Path]:
    return sorted(RESULTS.glob("*.json"))


def test_there_are_results_files() -> None:
    assert {p.stem for p in files()} >= {"retrieval", "embedders", "simulation", "simulation_latency",
                                         "eval_locomo", "eval_longmemeval", "design_store", "designs",
                                         "designs_locomo", "facts", "real_model", "service_load", "trust_town",
                                         "sweep", "view", "retrieval_vectors"}


@pytest.mark.parametrize("path", files(), ids=lambda p: p.stem)
def test_every_results_file_matches_the_schema(path: Path, rf: ModuleType) -> None:
    result = rf.load(path)
    assert result.name == path.stem
    for run in result.runs:
        assert run.machine.cpus > 0 and run.rows
        assert run.commit is None or re.fullmatch(r"[0-9a-f]{7,40}(\+dirty)?", run.commit)
        assert run.measured <= date.today()
        # A transcribed run says where from; one the benchmark wrote records the Python and platform.
        assert run.transcribed or (run.machine.python and run.machine.platform), run.command


def test_the_results_page_lists_every_file_with_each_command(hooks: ModuleType, rf: ModuleType) -> None:
    found = hooks.results()
    page = hooks.results_page(found)
    assert set(found) == {p.stem for p in files()}
    for path in files():
        result = rf.load(path)
        assert f"## {result.title} {{#{path.stem}}}" in page
        for run in result.runs:
            assert f"`{run.command}`" in page


def test_no_page_types_a_measured_table_and_each_marker_names_a_file(hooks: ModuleType) -> None:
    found = hooks.results()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        markers = re.findall(r"^\[results: ([a-z0-9_]+)\]", text, re.MULTILINE)
        assert markers, f"{page.name} shows no results table"
        assert set(markers) <= set(found), page.name
        expanded = hooks.expand_results(text, found, page.name)
        assert "[results: " not in expanded
        # A table's header is the line before its |---| rule: only the descriptive ones are left.
        headers = re.findall(r"^(\|.*\|)\n\|[-:| ]+\|$", text, re.MULTILINE)
        assert set(headers) <= DESCRIPTIVE, f"{page.name} types a table of figures: make it a results file"


def test_a_marker_for_a_missing_file_stops_the_build_naming_it(hooks: ModuleType) -> None:
    with pytest.raises(PluginError, match=r"benchmarks.md: \[results: nosuch\]: no benchmarks/results/nosuch.json"):
        hooks.expand_results("[results: nosuch](../benchmarks/results/nosuch.json)\n", hooks.results(), "benchmarks.md")


@pytest.mark.parametrize("damage", ["{", '{"name": "x"}', "[]"])
def test_a_malformed_file_is_refused_naming_it(damage: str, tmp_path: Path, rf: ModuleType) -> None:
    path = tmp_path / "x.json"
    path.write_text(damage)
    with pytest.raises(rf.ResultError, match=r"x.json: not a results file"):
        rf.load(path)
    with pytest.raises(rf.ResultError, match="no such results file"):
        rf.load(tmp_path / "missing.json")


def test_the_writer_records_the_command_machine_and_commit_and_replaces_a_run_of_the_same_command(
        tmp_path: Path, rf: ModuleType) -> None:
    out = tmp_path / "demo.json"
    argv = ["benchmarks/demo.py", "--n", "10"]
    rf.record(out, "demo", "A demo", [{"n": 10, "ms": {"mean": 1.5, "median": 1.0}}], argv=argv)
    rf.record(out, "demo", "A demo", [{"n": 20, "ms": {"mean": 2.5, "median": 2.0}}], argv=[*argv[:2], "20"])
    rf.record(out, "demo", "A demo", [{"n": 10, "ms": {"mean": 1.25, "median": 1.0}}], argv=argv)
    result = rf.load(out)
    assert [r.command for r in result.runs] == ["python benchmarks/demo.py --n 20", "python benchmarks/demo.py --n 10"]
    assert result.runs[1].rows == [{"n": 10, "ms@mean": 1.25, "ms@median": 1.0}]
    assert result.runs[1].machine.python and result.runs[1].machine.cpus >= 1
    assert result.runs[1].commit and re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", result.runs[1].commit)
    table = rf.table(result)
    assert "| run | n | ms@mean | ms@median |" in table and "`python benchmarks/demo.py --n 10` — measured" in table
    assert json.loads(out.read_text())["schema_version"] == 1


def test_the_design_store_benchmark_writes_a_results_file(tmp_path: Path, rf: ModuleType) -> None:
    bench = _load("design_store", ROOT / "benchmarks" / "design_store.py")
    out = tmp_path / "design_store.json"
    assert bench.main(["--quick", "--design", "full", "--results", str(out)]) == 0
    result = rf.load(out)
    (run,) = result.runs
    assert run.command.startswith("python benchmarks/design_store.py --quick") and run.rows[0]["design"] == "full" and run.rows[0]["write_ms@10"] > 0


def test_the_designs_town_benchmark_runs_every_design_asked_against_the_stream(tmp_path: Path, rf: ModuleType) -> None:
    bench = _load("designs_town", ROOT / "benchmarks" / "designs_town.py")
    out = tmp_path / "designs_town.json"
    assert bench.main(["--agents", "2", "--hours", "0.1", "--embedder", "hash", "--designs", "recent",
                       "--results", str(out)]) == 0
    (run,) = rf.load(out).runs
    assert [r["design"] for r in run.rows] == ["stream", "recent"]  # the stream first, always
    stream, recent = run.rows
    assert stream["vs_stream"] == 1.0 and recent["vs_stream"] > 0 and recent["contexts_per_agent_step"] is not None
    assert stream["context_tokens_per_recall"] is None and recent["store_bytes_per_agent"] > 0


@pytest.mark.parametrize(("mode", "data", "executed"), [
    ("quick", True, ["01-recall", "02-reflection", "03-simulation"]),
    ("none", True, []),
    ("all", True, ["01-recall", "02-reflection", "03-simulation", "04-benchmarks", "05-experiments", "06-memory-designs",
                   "07-one-agent-two-designs"]),
    ("all", False, ["01-recall", "02-reflection", "03-simulation", "04-benchmarks", "05-experiments",
                    "06-memory-designs", "07-one-agent-two-designs"]),  # 04 and 06 on the samples memstream ships
])
def test_which_notebooks_the_build_executes(mode: str, data: bool, executed: list[str], hooks: ModuleType,
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Plugin:
        config: dict[str, object] = {}

    if data:
        (tmp_path / "locomo").mkdir()
    monkeypatch.setenv("MEMSTREAM_DATA", str(tmp_path))
    monkeypatch.setenv("MEMSTREAM_DOCS_EXECUTE", mode)
    plugin = Plugin()
    plugin.config = {"execute": False, "execute_ignore": []}
    config = type("Config", (), {"plugins": {"mkdocs-jupyter": plugin}})()
    hooks.on_config(config)
    stems = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert plugin.config["execute"] is bool(executed)
    assert plugin.config["execute_ignore"] == [f"notebooks/{s}.ipynb" for s in stems if s not in executed]
    monkeypatch.setenv("MEMSTREAM_DOCS_EXECUTE", "some")
    with pytest.raises(PluginError, match="all, quick, none"):
        hooks.on_config(config)

"""A feature whose packages are an optional extra says in one line which extra to install, when they are
missing (simulated here by hiding the module: ``sys.modules[name] = None`` makes its import fail)."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.errors import MissingExtraError, import_extra
from memstream.models import make_embedder

ROOT = Path(__file__).resolve().parents[1]
SPEC = {"base": {"agents": 2, "hours": 0.5, "embedder": "hash"}, "grid": {"seed": [0]},
        "measures": [{"network": {}}]}


def test_the_wordllama_embedder_names_the_eval_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)
    embedder = make_embedder("wordllama")  # made without the package: its model loads when first used
    with pytest.raises(MissingExtraError) as raised:
        embedder.embed(["Isabella is planning a party"])
    assert str(raised.value) == "the wordllama embedder needs memstream[eval]: pip install 'memstream[eval]'"


def test_the_sweep_names_the_ray_extra_in_one_line_exit_2(monkeypatch: pytest.MonkeyPatch, capsys,
                                                          tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    assert main(["sweep", str(spec), "--out", str(tmp_path / "sweep")]) == 2
    err = capsys.readouterr().err
    assert err == "memstream: error: memstream sweep needs memstream[ray]: pip install 'memstream[ray]'\n"
    assert not (tmp_path / "sweep").exists()  # refused before anything is written


@pytest.mark.parametrize("module", ["uvicorn", "fastapi"])
def test_serve_names_the_service_extra_in_one_line_exit_2(module: str, monkeypatch: pytest.MonkeyPatch, capsys,
                                                          tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    assert main(["serve", "--store", str(tmp_path / "s.db")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "memstream: error: memstream serve needs memstream[service]: pip install 'memstream[service]'"]
    assert not (tmp_path / "s.db").exists()  # refused before the store is made


def test_serve_mcp_names_the_mcp_extra_in_one_line_exit_2(monkeypatch: pytest.MonkeyPatch, capsys,
                                                          tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)  # hidden even when another test loaded it
    assert main(["serve", "--store", str(tmp_path / "s.db"), "--mcp", "stdio"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "memstream: error: memstream serve --mcp needs memstream[mcp]: pip install 'memstream[mcp]'"]
    assert not (tmp_path / "s.db").exists()


def test_the_langgraph_store_names_the_langgraph_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langgraph", None)
    monkeypatch.setitem(sys.modules, "langgraph.store.base", None)
    monkeypatch.delitem(sys.modules, "memstream.integrations.langgraph", raising=False)
    import memstream.integrations

    with pytest.raises(MissingExtraError, match=r"pip install 'memstream\[langgraph\]'$"):
        memstream.integrations.MemstreamStore  # noqa: B018 - the lazy import is what is tested


def test_a_cli_user_gets_the_missing_embedder_as_one_line_exit_2(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)
    assert main(["demo", "--embedder", "wordllama"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "memstream: error: the wordllama embedder needs memstream[eval]: pip install 'memstream[eval]'"]


def test_a_package_of_the_extra_missing_its_own_dependency_names_the_extra_too(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "memstream_test_extra.py").write_text("import memstream_test_extra_needs\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "memstream_test_extra_needs", None)
    with pytest.raises(MissingExtraError, match=r"^the thing needs memstream\[eval\]: pip install 'memstream\[eval\]'$"):
        import_extra("memstream_test_extra", feature="the thing", extra="eval")
    assert import_extra("json", feature="json", extra="eval") is json


def test_every_extra_named_in_the_package_is_declared_and_dev_has_them_all() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    named = {"eval", "langgraph", "mcp", "postgres", "ray", "service"}  # the extras memstream's import_extra calls name
    sources = "\n".join(p.read_text() for p in (ROOT / "memstream").rglob("*.py"))
    assert {e for e in extras if f'extra="{e}"' in sources} == named
    # dev has every extra: those named above and `docs` (the site's tools, which no feature of the package imports)
    assert f"memstream[{','.join(sorted(named | {'docs'}))}]" in extras["dev"] and set(extras) == named | {"docs", "dev"}
    core = " ".join(project["dependencies"])
    assert "wordllama" not in core and "ray" not in core

"""benchmarks/design_store.py runs (its --quick size) and writes the figures the README's table reads."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from memstream.designs import DESIGNS, storable
from tests.helpers import ROOT


def _benchmark():
    spec = importlib.util.spec_from_file_location("design_store", ROOT / "benchmarks" / "design_store.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_quick_run_measures_every_design_kept_as_rows(tmp_path: Path, capsys) -> None:
    out = tmp_path / "store.json"
    assert _benchmark().main(["--quick", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    kept = [n for n in DESIGNS if storable(n)]
    assert [r["design"] for r in result["designs"]] == kept
    for r in result["designs"]:
        assert set(r["write_ms"]) == {"10", "100"} and all(v > 0 for v in r["write_ms"].values())
        assert r["write_ratio"] > 0, r
        if "open_not_measured" in r:  # owners that cannot be copied row for row: said, not guessed
            assert r["open_context_ms"] is None and "record ids" in r["open_not_measured"], r
            continue
        assert r["open_context_ms"] > 0 and r["bytes_per_entry"] > 0, r
        assert r["context_tokens"] > 0 or r["design"] == "profile", r  # the profile of plain turns may be empty
    assert result["not_measured"] == [n for n in DESIGNS if not storable(n)]
    assert "open+ctx ms" in capsys.readouterr().out


def test_a_design_not_kept_as_rows_is_refused_in_one_line(capsys) -> None:
    for name in ["no-such-design", *(n for n in DESIGNS if not storable(n))][:2]:
        assert _benchmark().main(["--quick", "--design", name]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and name in err and "full" in err

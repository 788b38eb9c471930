"""A path that is a folder or a device is called that, not "no such file"; ``-k`` past its maximum is one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstream.cli import main
from memstream.cli.flags import MAX_K


@pytest.mark.parametrize("argv", [["import", "{tmp}/s.db", "{path}"], ["run", "--town", "{path}", "--out", "{tmp}/r"],
                                  ["sweep", "{path}", "--out", "{tmp}/o"], ["run", "--scenario", "{path}",
                                                                            "--out", "{tmp}/r"]])
@pytest.mark.parametrize(("path", "said"), [("{tmp}/folder", "is a folder"), ("/dev/null", "not a regular file")])
def test_a_folder_or_a_device_is_named_as_such(tmp_path: Path, capsys, argv: list[str], path: str, said: str) -> None:
    (tmp_path / "folder").mkdir()
    given_path = path.format(tmp=tmp_path)
    assert main([a.format(tmp=tmp_path, path=given_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and "no such" not in err, err
    assert not (tmp_path / "r").exists() and not (tmp_path / "o").exists()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(min_value=MAX_K + 1, max_value=10**40), st.sampled_from(["eval", "recall"]))
def test_a_huge_k_is_refused_in_one_line(tmp_path: Path, capsys, k: int, command: str) -> None:
    argv = ["eval", "scenarios", "-k", f"5,{k}"] if command == "eval" else \
        ["recall", str(tmp_path / "none.db"), "--query", "x", "-k", str(k)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{MAX_K:,}" in err, err

"""The wheel installs as a user installs it: built from the working tree, installed (the core alone, no
extra) into a fresh virtual environment, and run in a folder outside the repository, so nothing here
can lean on the checkout: `memstream --version`, `memstream demo`, a small town, the README's first
Quickstart and its designs example run there, and an extra that is not installed says which it is.

pip fetches the core's dependencies from the package registry (its cache makes a second run quick); with no
registry reachable the tests skip, saying so. The size of the core install is printed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import memstream
from tests.helpers import ROOT
from tests.test_readme import python_blocks

pytestmark = pytest.mark.slow

#: What the wheel is built from: the project's metadata, the files it names, and the package.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "memstream")
#: Words of pip's output when it could not reach a registry (not a resolution error of our own making); a
#: refused connection says only "from versions: none", so a failure is also checked with a probe.
NO_REGISTRY = ("NewConnectionError", "Failed to establish a new connection", "Temporary failure in name resolution",
               "Network is unreachable", "No route to host", "ConnectTimeoutError", "ReadTimeoutError",
               "Max retries exceeded", "ProxyError")
#: The extras' packages, none of which the core installs.
EXTRAS = {"wordllama": "eval", "ray": "ray", "fastapi": "service", "uvicorn": "service"}


@dataclass(frozen=True)
class Installed:
    """The wheel, the fresh environment it was installed into, and a folder outside the repository."""

    wheel: Path
    venv: Path
    work: Path

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(self, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=self.work, env=_user_env(), capture_output=True, text=True, timeout=timeout)


def _user_env() -> dict[str, str]:
    """This shell's environment without what points at the checkout or at a model: a user's, offline."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "OPENAI_API_KEY", "OPENAI_BASE_URL")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("MEMSTREAM_")}


def _pip(what: str, argv: list[str], cwd: Path) -> None:
    """Run a pip (or build) step; skip when it failed for want of a registry, fail on any other failure."""
    done = subprocess.run(argv, cwd=cwd, env=_user_env(), capture_output=True, text=True, timeout=600)
    if done.returncode == 0:
        return
    said = done.stdout + done.stderr
    if any(word in said for word in NO_REGISTRY) or not _registry_answers(cwd):
        pytest.skip(f"no package registry reachable, so the wheel could not be {what}")
    pytest.fail(f"{what} failed ({done.returncode}):\n{said[-4000:]}")


def _registry_answers(cwd: Path) -> bool:
    """Whether pip's registry lists pip itself: a registry that cannot is unreachable (pip says only that it
    found no version), and a failure with one that can is memstream's own."""
    probe = [sys.executable, "-m", "pip", "index", "versions", "pip"]
    return subprocess.run(probe, cwd=cwd, env=_user_env(), capture_output=True, timeout=300).returncode == 0


def _megabytes(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("packaging")
    src, dist, work = root / "src", root / "dist", root / "work"
    src.mkdir()
    work.mkdir()
    for name in SOURCES:  # a copy, so the build's build/ and egg-info stay out of the checkout
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    if importlib.util.find_spec("build"):
        _pip("built", [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(src)], root)
    else:
        _pip("built", [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)], root)
    wheel = next(dist.glob("memstream-*.whl"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=_user_env(), timeout=300)
    _pip("installed", [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], root)
    return Installed(wheel, venv, work)


def test_the_wheel_holds_the_licence_the_types_marker_and_the_data(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    for expected in ("memstream/py.typed", "memstream/sim/data/smallville.yaml", "memstream/examples/isabella.jsonl",
                     "memstream/examples/locomo-sample.json", "memstream/examples/longmemeval-sample.json",
                     "memstream/examples/kestrel_cove.yaml", "memstream/examples/cove_visit.yaml",
                     "memstream/models/data/minilm-tokenizer.json", "memstream/view/template.html"):
        assert expected in names
    licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert zipfile.ZipFile(installed.wheel).read(licence) == (ROOT / "LICENSE").read_bytes()


def test_the_installed_package_is_the_wheels_not_the_checkout(installed: Installed) -> None:
    done = installed.run(installed.bin("python"), "-c", "import memstream; print(memstream.__file__)")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(installed.venv)


def test_version_from_the_one_source(installed: Installed) -> None:
    done = installed.run(installed.bin("memstream"), "--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"memstream {memstream.__version__}")


def test_memstream_demo_runs_on_the_core_with_the_default_embedder(installed: Installed) -> None:
    done = installed.run(installed.bin("memstream"), "demo")
    assert done.returncode == 0, done.stderr
    assert "Built a stream of 27 memories for Isabella Rodriguez" in done.stdout
    assert "embedder minilm-l6-int8" in done.stdout  # the default, MiniLM, is in the core


def test_a_small_town_runs_on_the_core(installed: Installed) -> None:
    done = installed.run(installed.bin("memstream"), "run", "--agents", "3", "--hours", "0.5", "--out", "town")
    assert done.returncode == 0, done.stderr
    assert (installed.work / "town" / "streams.db").is_file()


def test_the_readme_quickstart_and_designs_example_run_on_the_core(installed: Installed) -> None:
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    quickstart = installed.work / "quickstart.py"
    quickstart.write_text(blocks[0])
    done = installed.run(installed.bin("python"), str(quickstart))
    assert done.returncode == 0, done.stderr
    assert "Isabella is planning a Valentine's Day party" in done.stdout  # the Quickstart's recall
    designs = installed.work / "designs.py"  # the tiered design's BM25 is in the core too
    designs.write_text(next(b for b in blocks if "make_design(name)" in b))  # the designs side by side, facts too
    done = installed.run(installed.bin("python"), str(designs))
    assert done.returncode == 0, done.stderr


def test_the_extras_are_not_installed_and_say_so_in_one_line(installed: Installed) -> None:
    for module in EXTRAS:
        done = installed.run(installed.bin("python"), "-c",
                             f"import importlib.util; print(importlib.util.find_spec({module!r}) is None)")
        assert done.stdout.strip() == "True", f"{module} came with the core install"
    done = installed.run(installed.bin("memstream"), "demo", "--embedder", "wordllama")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "memstream: error: the wordllama embedder needs memstream[eval]: pip install 'memstream[eval]'"]


def test_the_size_of_the_core_install(installed: Installed, capsys: pytest.CaptureFixture[str]) -> None:
    site = next((installed.venv / "lib").glob("python3*/site-packages"))
    total = _megabytes(site)
    tools = sum(_megabytes(p) for p in site.iterdir() if p.name.split("-")[0] in ("pip", "setuptools", "_distutils_hack"))
    distributions = len(list(site.glob("*.dist-info")))
    with capsys.disabled():
        print(f"\ncore install: {total:.0f} MB in site-packages ({total - tools:.0f} MB without pip), "
              f"{distributions} distributions; wheel {installed.wheel.stat().st_size / 1e6:.1f} MB")
    # Measured 426 MB (onnxruntime 78, numpy 73, faiss 66, matplotlib 35, openai 30, MiniLM 22): an extra's
    # package in the core (Ray alone is 240 MB) would break this bound.
    assert total - tools < 600

"""A benchmark's figures as a results file: ``benchmarks/results/NAME.json``, which the docs' results page renders.

Every benchmark that publishes figures takes ``--results [FILE]`` (:func:`add_results_flag`) and, after its run,
calls :func:`record`: the file gets one *run*, the figures (one row per measurement, the keys the benchmark
prints) with the exact command, the date, a summary of the machine (CPUs, Python, platform, processor) and
the git commit the code was at (``+dirty`` when tracked files had changes). A run whose command is already in
the file replaces it; another command is added beside it (one file may hold a table measured by several
commands, e.g. one agent count per process). Delete the file to start anew.

The docs site (``scripts/mkdocs_hooks.py``) renders every file into ``docs/results.md`` at build time, and a
line ``[results: NAME](.../benchmarks/results/NAME.json)`` in a page into that file's table, so no figure in
the docs is typed by hand. A file that is missing or does not match :class:`ResultFile` fails the build
with the file's name and what is wrong. ``tests/test_results.py`` checks every committed file.

Figures measured before this file existed were *transcribed* from the docs that recorded them (their
``transcribed`` field says from where; their commit is the one that recorded them, their date the one the
docs gave): the benchmarks are not re-timed on a busy machine to fill the folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
#: How a run's command starts: a benchmark, the CLI, or one of the repository's scripts (run from its root).
COMMANDS = ("python benchmarks/", "memstream ", "python scripts/", "PYTHONPATH=. python scripts/")
#: A figure: what the benchmarks print (numbers, names, flags; None for "not measured").
Scalar = str | int | float | bool | None


class ResultError(ValueError):
    """A results file that is missing or does not match the schema (its path and the first problem)."""


class Machine(BaseModel):
    """Where a run was measured. ``None``: not recorded when the figures were (transcribed runs)."""

    model_config = ConfigDict(extra="forbid")
    cpus: int = Field(gt=0)
    python: str | None
    platform: str | None
    processor: str | None = None


class Run(BaseModel):
    """One command's figures."""

    model_config = ConfigDict(extra="forbid")
    command: str = Field(min_length=1)
    measured: date
    machine: Machine
    commit: str | None = Field(pattern=r"^[0-9a-f]{7,40}(\+dirty)?$")
    #: Where the figures were copied from, for a run measured before the benchmark wrote results files.
    transcribed: str | None = None
    rows: list[dict[str, Scalar]] = Field(min_length=1)

    @field_validator("command")
    @classmethod
    def _a_command_a_reader_can_run(cls, command: str) -> str:
        if not command.startswith(COMMANDS):
            raise ValueError(f"{command!r}: a command starts with {' or '.join(map(repr, COMMANDS))}")
        return command


class ResultFile(BaseModel):
    """``benchmarks/results/NAME.json``: a benchmark's published figures, one or more runs."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Literal[1] = 1
    name: str = Field(pattern=r"^[a-z0-9_]+$")
    title: str = Field(min_length=1)
    #: A paragraph for the results page: what is measured and how to read it.
    about: str = ""
    runs: list[Run] = Field(min_length=1)


def machine() -> Machine:
    """This machine: CPU count, Python version, platform and (on Linux) the processor's model name."""
    processor = platform.processor() or None
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")]
        processor = names[0] if names else processor
    return Machine(cpus=os.cpu_count() or 1, python=platform.python_version(), platform=platform.platform(),
                   processor=processor)


def commit() -> str | None:
    """The checkout's commit, ``+dirty`` when tracked files differ from it; None outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=ROOT, capture_output=True).returncode
    except (OSError, subprocess.CalledProcessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty else "")


def command_line(argv: list[str] | None = None) -> str:
    """The command that is running, as a reader would type it from the repository's root."""
    argv = sys.argv if argv is None else argv
    return shlex.join(["python", f"benchmarks/{Path(argv[0]).name}", *argv[1:]])


def path_for(name: str) -> Path:
    return RESULTS / f"{name}.json"


def add_results_flag(parser: argparse.ArgumentParser, name: str) -> None:
    """``--results [FILE]``: write the figures to FILE (default ``benchmarks/results/NAME.json``)."""
    parser.add_argument("--results", nargs="?", const=str(path_for(name)), metavar="FILE",
                        help=f"add this run's figures, command, date, machine and commit to FILE "
                             f"(default benchmarks/results/{name}.json, which the docs' results page shows)")


def load(path: Path) -> ResultFile:
    """A results file, checked; :class:`ResultError` names the file and what is wrong with it."""
    path = Path(path).resolve()
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if not path.is_file():
        raise ResultError(f"{shown}: no such results file")
    try:
        result = ResultFile.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise ResultError(f"{shown}: not a results file ({e.error_count()} problem(s); {where}: {first['msg']})") from e
    if result.name != path.stem:
        raise ResultError(f"{shown}: its name is {result.name!r}; a results file is named after its file, {path.stem!r}")
    return result


def flat(row: dict[str, Any]) -> dict[str, Scalar]:
    """A row whose values are figures: a nested mapping's entries as ``KEY@SUBKEY`` (``write_ms@100``)."""
    out: dict[str, Scalar] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            out.update({f"{key}@{sub}": v for sub, v in flat(value).items()})
        else:
            out[key] = value
    return out


def record(path: str | Path, name: str, title: str, rows: list[dict[str, Any]], *, about: str = "",
           argv: list[str] | None = None, today: date | None = None) -> Path:
    """Add this run (``rows`` with the command, today's date, the machine and the commit) to the file at ``path``.

    A run of the same command in the file is replaced; the file's title and about are this call's.
    """
    path = Path(path)
    run = Run(command=command_line(argv), measured=today or datetime.now(UTC).date(), machine=machine(),
              commit=commit(), rows=[flat(row) for row in rows])
    runs = [r for r in load(path).runs if r.command != run.command] if path.exists() else []
    result = ResultFile(name=name, title=title, about=about, runs=[*runs, run])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)
    return path


def _cell(value: Scalar) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:,}"
    return str(value).replace("|", "\\|")


def _where(run: Run) -> str:
    m = run.machine
    parts = [f"{m.cpus} CPUs"] + [p for p in (m.processor, f"Python {m.python}" if m.python else None, m.platform) if p]
    said = f"measured {run.measured.isoformat()} on {', '.join(parts)}"
    said += f", commit `{run.commit[:12]}{'+dirty' if run.commit.endswith('+dirty') else ''}`" if run.commit else ""
    return said + (f"; transcribed from {run.transcribed}" if run.transcribed else "")


def table(result: ResultFile) -> str:
    """The file's figures as a Markdown table, each run's command under it."""
    columns: list[str] = []
    for run in result.runs:
        for row in run.rows:
            columns += [k for k in row if k not in columns]
    several = len(result.runs) > 1
    header = (["run"] if several else []) + columns
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if c != "run" and _numeric(result, c) else "---" for c in header) + "|"]
    for i, run in enumerate(result.runs, 1):
        for row in run.rows:
            lines.append("| " + " | ".join(([str(i)] if several else []) + [_cell(row.get(c)) for c in columns]) + " |")
    lines.append("")
    for i, run in enumerate(result.runs, 1):
        lines.append(f"{f'{i}. ' if several else ''}`{run.command}` — {_where(run)}")
    return "\n".join(lines) + "\n"


def _numeric(result: ResultFile, column: str) -> bool:
    values = [row.get(column) for run in result.runs for row in run.rows if row.get(column) is not None]
    return bool(values) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)

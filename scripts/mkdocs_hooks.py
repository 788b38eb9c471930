"""MkDocs hooks for memstream's docs site: the README as its home page, the notebooks as its pages, the results page.

One source for each: the home page is README.md with its ``docs/`` links made relative to the site, so
the README that GitHub shows and the site's first page never drift apart; the notebooks stay in
``notebooks/`` (where ``make test`` executes them) and are rendered by mkdocs-jupyter from there; the
results page (``results.md``) is rendered from ``benchmarks/results/*.json`` at build time, and a page's line
``[results: NAME](../benchmarks/results/NAME.json)`` (a link to the file on GitHub) becomes that file's table
on the site. A results file that is missing or malformed stops the build, naming the file and the problem.

Which notebooks are executed while the site is built (``MEMSTREAM_DOCS_EXECUTE``): ``all`` (the default, what
``make docs`` does) executes every notebook, those reading LoCoMo and LongMemEval (:data:`ON_DATA`) on the data
where it is (``MEMSTREAM_DATA`` or ``../shared/data``) and elsewhere on memstream's own samples in their schemas
(``memstream/examples/``; the notebook says which in its output, and the build log too); ``quick`` (``make docs-strict``, inside ``make test``) only :data:`QUICK`, the offline ones that take a
few seconds; ``none`` renders every notebook as committed, without outputs.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = "notebooks"
#: A README link into docs/ (``](docs/x.md)``), which the site serves from its root.
_DOCS_LINK = re.compile(r"\]\(docs/")
#: A line standing for a results file's table: ``[results: NAME](PATH/benchmarks/results/NAME.json)``.
_RESULTS_LINE = re.compile(r"^\[results: (?P<name>[a-z0-9_]+)\]\((?:\.\./)*benchmarks/results/(?P<file>[^)]*)\)$",
                           re.MULTILINE)
#: Executed in ``quick`` mode: offline and a few seconds each (measured in docs/contributing.md).
QUICK = ("01-recall", "02-reflection", "03-simulation")
#: The notebooks that read the dev halves of LoCoMo and LongMemEval.
ON_DATA = ("04-benchmarks", "06-memory-designs")
MODES = ("all", "quick", "none")
log = logging.getLogger("mkdocs.hooks.memstream")


@functools.cache
def _result_file() -> ModuleType:
    """benchmarks/result_file.py (the benchmarks' own writer and schema: benchmarks/ is not a package)."""
    if "result_file" in sys.modules:  # imported already, by a benchmark or a test
        return sys.modules["result_file"]
    spec = importlib.util.spec_from_file_location("result_file", ROOT / "benchmarks" / "result_file.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["result_file"] = module
    spec.loader.exec_module(module)
    return module


def home_page(readme: str) -> str:
    """The README with its links into ``docs/`` made relative to the site's root."""
    return _DOCS_LINK.sub("](", readme)


def results() -> dict[str, Any]:
    """Every results file by name, checked; a missing folder or a malformed file raises PluginError."""
    rf = _result_file()
    paths = sorted(rf.RESULTS.glob("*.json"))
    if not paths:
        raise PluginError(f"no results files in {rf.RESULTS}: the results page has nothing to show")
    try:
        found = {p.stem: rf.load(p) for p in paths}
    except rf.ResultError as e:
        raise PluginError(f"results page: {e}") from e
    # In the order the benchmarks page shows them, then the others by name.
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    shown = [m.group("name") for m in _RESULTS_LINE.finditer(page)]
    return dict(sorted(found.items(), key=lambda kv: (shown.index(kv[0]) if kv[0] in shown else len(shown), kv[0])))


def results_page(found: dict[str, Any]) -> str:
    """docs/results.md: every results file's table, the command of each run under it."""
    rf = _result_file()
    lines = ["# Results", "",
             "Every figure on this page is read from a file in `benchmarks/results/` when the site is built; the",
             "benchmark wrote it (`--results`), or, for figures measured before the files existed, it was transcribed",
             "from the page that recorded them with their command, date and commit (the run says so). Each run's",
             "command is under its table. To add or renew one, run the command with `--results` on a quiet machine.",
             "How each is measured and what the figures mean: [benchmarks](benchmarks.md).", ""]
    for name, result in found.items():
        lines += [f"## {result.title} {{#{name}}}", ""]
        if result.about:
            lines += [result.about, ""]
        lines += [rf.table(result), f"(`benchmarks/results/{name}.json`)", ""]
    return "\n".join(lines)


def expand_results(markdown: str, found: dict[str, Any], page: str) -> str:
    """Each ``[results: NAME](...)`` line of a page as NAME's table, linked to the results page."""
    rf = _result_file()

    def one(m: re.Match[str]) -> str:
        name = m.group("name")
        if m.group("file") != f"{name}.json":
            raise PluginError(f"{page}: [results: {name}] must link to benchmarks/results/{name}.json")
        if name not in found:
            raise PluginError(f"{page}: [results: {name}]: no benchmarks/results/{name}.json "
                              f"(there are: {', '.join(found)})")
        return rf.table(found[name]) + f"\n([all results](results.md#{name}))\n"

    return _RESULTS_LINE.sub(one, markdown)


def data_here() -> bool:
    """The dev data the notebooks in ON_DATA read, where they look for it."""
    data = Path(os.environ.get("MEMSTREAM_DATA", ROOT.parent / "shared" / "data"))
    return (data / "locomo").is_dir()


def on_config(config: Any) -> Any:
    """Which notebooks mkdocs-jupyter executes, by MEMSTREAM_DOCS_EXECUTE (all, quick, none)."""
    mode = os.environ.get("MEMSTREAM_DOCS_EXECUTE", "all")
    if mode not in MODES:
        raise PluginError(f"MEMSTREAM_DOCS_EXECUTE={mode!r}: give one of {', '.join(MODES)}")
    jupyter = config.plugins["mkdocs-jupyter"].config
    stems = sorted(p.stem for p in (ROOT / NOTEBOOKS).glob("*.ipynb"))
    run = {"none": [], "quick": list(QUICK), "all": stems}[mode]
    if mode == "all" and not data_here():
        log.info("notebooks %s executed on memstream's own samples (memstream/examples/): no LoCoMo in "
                 "MEMSTREAM_DATA or ../shared/data", ", ".join(ON_DATA))
    jupyter["execute"] = bool(run)
    jupyter["execute_ignore"] = [f"{NOTEBOOKS}/{s}.ipynb" for s in stems if s not in run]
    return config


@event_priority(100)  # before mkdocs-jupyter's on_files, which renders the notebooks it finds there
def on_files(files: Files, config: Any) -> Files:
    """Add the home page (from README.md), the results page and every notebook to the site's files."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "index.md", content=home_page(readme)))
    files.append(File.generated(config, "results.md", content=results_page(results())))
    for notebook in sorted((ROOT / NOTEBOOKS).glob("*.ipynb")):
        files.append(File(f"{NOTEBOOKS}/{notebook.name}", src_dir=str(ROOT), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """A page's ``[results: NAME](...)`` lines as their tables."""
    if "[results: " not in markdown:
        return markdown
    return expand_results(markdown, results(), page.file.src_uri)

"""MkDocs hooks for memstream's docs site: the README as its home page, the notebooks as its pages.

One source for each: the home page is README.md with its ``docs/`` links made relative to the site, so
the README that GitHub shows and the site's first page never drift apart; the notebooks stay in
``notebooks/`` (where ``make test`` executes them) and are rendered by mkdocs-jupyter from there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = "notebooks"
#: A README link into docs/ (``](docs/x.md)``), which the site serves from its root.
_DOCS_LINK = re.compile(r"\]\(docs/")


def home_page(readme: str) -> str:
    """The README with its links into ``docs/`` made relative to the site's root."""
    return _DOCS_LINK.sub("](", readme)


@event_priority(100)  # before mkdocs-jupyter's on_files, which renders the notebooks it finds there
def on_files(files: Files, config: Any) -> Files:
    """Add the home page (from README.md) and every notebook to the site's files."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "index.md", content=home_page(readme)))
    for notebook in sorted((ROOT / NOTEBOOKS).glob("*.ipynb")):
        files.append(File(f"{NOTEBOOKS}/{notebook.name}", src_dir=str(ROOT), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files

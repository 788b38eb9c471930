"""A design's state in a file: JSON naming the design that wrote it, its settings and its state.

One file per design state, written atomically (a temporary file renamed over the old one), so a
crash leaves the previous state whole. A file written by another design is refused in one line:
a ``stream`` state read into ``tiered`` would silently be nonsense.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memstream.designs.base import MemoryDesign
from memstream.errors import MemstreamError
from memstream.files import read_json

FORMAT = 1
KEY = "memstream_design"


def save_state(design: MemoryDesign, path: str | Path, *, extra: dict[str, Any] | None = None) -> Path:
    """Write ``design``'s state to ``path`` (and ``extra``, what the caller keeps beside it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {KEY: design.name, "format": FORMAT, "config": design.config.model_dump(mode="json"),
            "state": design.get_state(), "extra": extra or {}}
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data), encoding="utf-8")
    os.replace(temporary, path)
    return path


def load_state(design: MemoryDesign, path: str | Path) -> dict[str, Any]:
    """Load the state in ``path`` into ``design`` (fresh), refusing a file another design wrote; the
    file's settings (``config``) and whatever else its writer kept beside the state (``extra``)."""
    data = read_json(path, "design state file")
    if not isinstance(data, dict) or KEY not in data or "state" not in data:
        raise MemstreamError(f"{path} is not a memstream design state file")
    if data[KEY] != design.name:
        raise MemstreamError(f"{path} holds the state of the {data[KEY]!r} design, not {design.name!r}; "
                             f"load it with --design {data[KEY]}")
    if data.get("format") != FORMAT:
        raise MemstreamError(f"{path} is design state format {data.get('format')}, this memstream reads {FORMAT}")
    try:
        design.set_state(data["state"])
    except (KeyError, TypeError, ValueError) as e:
        raise MemstreamError(f"{path}: damaged {design.name} state ({type(e).__name__}: {e})") from None
    return {"config": data.get("config"), **(data.get("extra") or {})}

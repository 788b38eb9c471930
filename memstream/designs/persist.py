"""A design's state in a file: JSON naming the design that wrote it, its settings and its state.

One file per design state, written atomically (a temporary file renamed over the old one), so a
crash leaves the previous state whole. A file written by another design is refused in one line:
a ``stream`` state read into ``tiered`` would silently be nonsense. The state is validated as the
design's ``State`` (:mod:`memstream.designs.state`) before the design sees it, so a damaged file is
refused in one line too; a file of the first format is read through :mod:`.state_v1`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from memstream.designs.base import DesignConfig, MemoryDesign
from memstream.designs.state_v1 import upgrade
from memstream.errors import MemstreamError
from memstream.files import problem, read_json

#: The format written (2: state per owner); 1 is still read.
FORMAT = 2
READS = (1, 2)
KEY = "memstream_design"


class StateFile(BaseModel):
    """A state file's envelope. ``config``, ``state`` and ``extra`` stay JSON here: the design reads the
    first two as its own types, and ``extra`` is whatever the file's writer kept beside the state."""

    design: str
    format: int
    config: dict[str, Any]
    state: dict[str, Any]
    extra: dict[str, Any] = {}


@dataclass(frozen=True)
class Loaded:
    """What a state file held besides the state: the settings it was written with, as the design reads
    them (None if they are not settings it takes), and what its writer kept beside it."""

    config: DesignConfig | None
    extra: dict[str, Any] = field(default_factory=dict)


def save_state(design: MemoryDesign, path: str | Path, *, extra: dict[str, Any] | None = None) -> Path:
    """Write ``design``'s state to ``path`` (and ``extra``, what the caller keeps beside it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {KEY: design.name, "format": FORMAT, "config": design.config.model_dump(mode="json"),
            "state": design.get_state().model_dump(mode="json"), "extra": extra or {}}
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data), encoding="utf-8")
    os.replace(temporary, path)
    return path


def load_state(design: MemoryDesign, path: str | Path) -> Loaded:
    """Load the state in ``path`` into ``design`` (fresh), refusing a file another design wrote or a damaged
    one; the file's settings and whatever else its writer kept beside the state."""
    data = read_json(path, "design state file")
    if not isinstance(data, dict) or KEY not in data or "state" not in data:
        raise MemstreamError(f"{path} is not a memstream design state file")
    if data[KEY] != design.name:
        raise MemstreamError(f"{path} holds the state of the {data[KEY]!r} design, not {design.name!r}; "
                             f"load it with --design {data[KEY]}")
    if data.get("format") not in READS:
        raise MemstreamError(f"{path} is design state format {data.get('format')}, this memstream reads "
                             f"{' and '.join(map(str, READS))}")
    try:
        envelope = StateFile.model_validate({**data, "design": data[KEY]})
        raw = envelope.state if envelope.format == FORMAT else upgrade(design.name, envelope.state)
        state = design.State.model_validate(raw)
    except ValidationError as e:
        raise MemstreamError(f"{path}: damaged {design.name} state ({problem(e)})") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise MemstreamError(f"{path}: damaged {design.name} state ({type(e).__name__}: {e})") from None
    try:
        design.set_state(state)
    except (KeyError, ValueError) as e:  # a record a summary waits on that the file does not hold, ...
        raise MemstreamError(f"{path}: damaged {design.name} state ({type(e).__name__}: {e})") from None
    try:
        config = design.Config.model_validate(envelope.config)
    except ValidationError:
        config = None
    return Loaded(config, envelope.extra)

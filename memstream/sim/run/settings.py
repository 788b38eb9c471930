"""A run directory's settings and town, read back: one check of the format's version for every command."""

from __future__ import annotations

import json
import re

from memstream.errors import MemstreamError
from memstream.sim.run.config import FORMAT, FORMAT_NAME, FORMAT_VERSION, READS, RunConfig
from memstream.sim.run.layout import CONFIG, TOWN, RunFiles
from memstream.sim.town import Town


def read_settings(files: RunFiles) -> tuple[RunConfig, Town]:
    """The run's settings and town, or one line saying why the folder is not a run directory this code reads."""
    path = files.root
    if files.half_made:
        raise MemstreamError(f"{path} was left half-made (stopped before its settings were written); make the run "
                             f"again with memstream run --out {path}, which clears it")
    if not files.is_run:
        raise MemstreamError(f"{path} is not a run directory (no {CONFIG}); make one with memstream run")
    try:
        data = json.loads(files.config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise MemstreamError(f"{path} is not a memstream run directory (unreadable {CONFIG})") from None
    check_format(data, str(path))
    try:
        config = RunConfig.model_validate(data)
        town = Town.model_validate_json(files.town.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        raise MemstreamError(f"{path} is not a memstream run directory (unreadable {CONFIG} or {TOWN})") from None
    return config, town


def written_format(files: RunFiles) -> object:
    """The format version the run directory's settings say it was written in."""
    try:
        return json.loads(files.config.read_text(encoding="utf-8")).get("format")
    except (OSError, ValueError, AttributeError):
        return None


def check_format(data: object, where: str) -> None:
    """Refuse, in one line naming the fix, a run directory's settings of another format or version."""
    found = data.get("format") if isinstance(data, dict) else None
    if found in READS:
        return
    m = re.fullmatch(rf"{re.escape(FORMAT_NAME)}(?:/([1-9]\d{{0,5}}))?", found) if isinstance(found, str) else None
    if m is None:
        raise MemstreamError(f"{where} is not a memstream run directory (its {CONFIG} has format "
                             f"{str(found)[:40]!r}, not {FORMAT!r}); make one with memstream run")
    version = int(m.group(1) or 1)
    if version > FORMAT_VERSION:
        raise MemstreamError(f"{where} was written by a newer memstream (format {found}; this one reads "
                             f"{FORMAT}); upgrade memstream to use it")
    raise MemstreamError(f"{where} was written by an older memstream (format {found}; this one reads {FORMAT}); "
                         "use the memstream that made it, or make the run again with memstream run (the same "
                         "settings and seed give the same run)")

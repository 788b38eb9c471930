"""Entries in JSON lines: what ``remember --file`` and ``import`` read, and what ``export`` writes.

One :class:`~memstream.designs.Entry` a line (``text``, ``at``, ``source``, ``kind``, ``session``, ``id``),
so an export is replayed by an import into the same design or another. The whole file is read and
checked before anything is written; a bad line is named by its number.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memstream.errors import MemstreamError
from memstream.files import problem, read_text
from memstream.timeutil import require_aware


def read_entries(path: str | Path, defaults: Mapping[str, Any] | None = None) -> list[Any]:
    """Every entry in the JSONL file ``path`` (``defaults``: fields a line leaves out); one line naming the
    first bad line and what is wrong with it."""
    from memstream.designs import Entry

    entries = []
    for number, line in enumerate(read_text(path, "entries file").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as e:
            raise MemstreamError(f"{path} line {number} is not JSON ({getattr(e, 'msg', type(e).__name__)})") from None
        if not isinstance(data, dict):
            raise MemstreamError(f"{path} line {number} is not an entry: give a JSON object such as "
                                 '{"text": "...", "at": "2026-05-01T09:00:00+00:00"}')
        try:
            given = Entry.model_validate({**(defaults or {}), **data})
            require_aware(given.at, "at")
        except ValidationError as e:
            raise MemstreamError(f"{path} line {number}: {problem(e)}") from None
        except MemstreamError as e:
            raise MemstreamError(f"{path} line {number}: {e}") from None
        entries.append(given)
    if not entries:
        raise MemstreamError(f"{path} holds no entries (one JSON object a line)")
    return entries


def entry_lines(entries: Iterable[Any]) -> Iterable[str]:
    """Each entry as its JSON line (fields at their defaults and an absent id left out)."""
    for e in entries:
        yield json.dumps(e.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


def write_lines(path: Path, lines: Iterable[str]) -> int:
    """Write ``lines`` to ``path`` whole or not at all (a temporary file renamed over it); how many."""
    temporary = path.with_name(path.name + ".tmp")
    count = 0
    try:
        with temporary.open("w", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
                count += 1
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return count

"""``memstream import``: memories from a JSON-lines file, one object per line.

Each line: ``{"owner", "text", "created_at"[, "kind", "importance", "cites", "metadata"]}``.
The whole file is validated before anything is written, so a bad line leaves
the stream as it was; then it is appended in batches under a progress bar.

Importing is idempotent: a record is known by its content (owner, kind, text, creation
time), and what the stream already holds is not written again, so importing a file twice,
or again after a crash, writes each record once. (A file that holds the same record n
times writes it n times, once.)
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from memstream.errors import MemstreamError
from memstream.files import read_text
from memstream.stream.memory import Memory
from memstream.stream.stream import MemoryStream, NewMemory, new_memory

BATCH = 512


@dataclass
class Imported:
    written: int
    already_there: int


def read_jsonl(path: Path) -> list[NewMemory]:
    lines = read_text(path, "file").splitlines()
    items = []
    for line_no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            fields = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as e:
            raise MemstreamError(f"{path}:{line_no}: not JSON ({getattr(e, 'msg', 'nested too deeply')})") from None
        if not isinstance(fields, dict):
            raise MemstreamError(f"{path}:{line_no}: expected a JSON object per line")
        try:
            items.append(new_memory(**{str(k): v for k, v in fields.items()}))
        except MemstreamError as e:
            raise MemstreamError(f"{path}:{line_no}: {e}") from None
    return items


def content_key(item: NewMemory | Memory) -> tuple[str, str, str, float]:
    """What makes a record the same record: its owner, kind, text and creation time."""
    return item.owner, item.kind, item.text, item.created_at.timestamp()


def import_jsonl(stream: MemoryStream, path: Path, *, progress: bool = True) -> Imported:
    """Read, check and import ``path`` (see :func:`import_items`)."""
    return import_items(stream, read_jsonl(path), progress=progress)


def import_items(stream: MemoryStream, items: list[NewMemory], *, progress: bool = True) -> Imported:
    """Append the records the stream does not hold yet, in batches; how many were written and skipped."""
    held = Counter(content_key(m) for owner in {it.owner for it in items} if stream.has(owner)
                   for m in stream.memories(owner))
    fresh = []
    for item in items:
        key = content_key(item)
        if held[key]:
            held[key] -= 1
        else:
            fresh.append(item)
    stream.check_cites(fresh, stream.store.next_id())
    with tqdm(total=len(fresh), unit="mem", desc="import", disable=not progress, leave=False) as bar:
        for start in range(0, len(fresh), BATCH):
            batch = fresh[start : start + BATCH]
            stream.extend(batch)
            bar.update(len(batch))
    return Imported(len(fresh), len(items) - len(fresh))

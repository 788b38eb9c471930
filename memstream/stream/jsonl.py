"""``memstream import``: memories from a JSON-lines file, one object per line.

Each line: ``{"owner", "text", "created_at"[, "kind", "importance", "cites", "metadata"]}``.
The whole file is validated before anything is written, so a bad line leaves
the stream as it was; then it is appended in batches under a progress bar.

Importing is idempotent: a record is known by its content (owner, kind, text, creation
time), and what the stream already holds is not written again, so importing a file twice,
again after a crash, or several times at once, writes each record once (the decision is
taken inside the write transaction). (A file that holds the same record n times writes it
n times, once.)
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from tqdm import tqdm

from memstream.errors import MemstreamError
from memstream.files import read_text
from memstream.stream.memory import Memory
from memstream.stream.stream import MemoryStream, NewMemory, new_memory
from memstream.timeutil import to_epoch

BATCH = 512


@dataclass
class Imported:
    written: int
    already_there: int


def read_jsonl(path: Path) -> list[NewMemory]:
    """Memories from a JSONL file (one object a line), each line checked, for ``memstream add``; a bad line is
    one error naming it.
    """
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
    return item.owner, item.kind, item.text, to_epoch(item.created_at)


def import_jsonl(stream: MemoryStream, path: Path, *, progress: bool = True) -> Imported:
    """Read, check and import ``path`` (see :func:`import_items`)."""
    return import_items(stream, read_jsonl(path), progress=progress)


def import_items(stream: MemoryStream, items: list[NewMemory], *, progress: bool = True) -> Imported:
    """Append the records the stream does not hold yet, in batches; how many were written and skipped.

    The n-th copy of a record in the file is written only if the stream holds fewer than n copies
    of it, and that is decided inside each batch's write transaction (under the file's write lock),
    so several imports of one file at once, or one after a crash, store it once. Records the
    stream already held before are left out before rating and embedding (they cost nothing).
    """
    nth = _occurrences(items)
    held = Counter(content_key(m) for owner in {it.owner for it in items} if stream.has(owner)
                   for m in stream.memories(owner))
    todo = [(item, n) for item, n in zip(items, nth, strict=True) if n > held[content_key(item)]]
    stream.check_cites([item for item, _ in todo], stream.store.next_id())
    written = 0
    with tqdm(total=len(todo), unit="mem", desc="import", disable=not progress, leave=False) as bar:
        for start in range(0, len(todo), BATCH):
            batch = todo[start : start + BATCH]
            wanted = dict(zip(map(id, (item for item, _ in batch)), (n for _, n in batch), strict=True))
            written += len(stream.extend([item for item, _ in batch],
                                         select=partial(_absent, stream, nth=wanted)))
            bar.update(len(batch))
    return Imported(written, len(items) - written)


def _occurrences(items: list[NewMemory]) -> list[int]:
    """For each record, which copy of it in the file it is (1 for the first)."""
    seen: Counter[tuple[str, str, str, float]] = Counter()
    out = []
    for item in items:
        key = content_key(item)
        seen[key] += 1
        out.append(seen[key])
    return out


def _absent(stream: MemoryStream, items: list[NewMemory], nth: dict[int, int]) -> list[bool]:
    """Inside the write transaction: whether each item's copy is one the file holds more of than the stream."""
    owners = sorted({it.owner for it in items})
    marks = ",".join("?" * len(owners))
    stored = Counter(stream.store.db.execute(
        f"SELECT owner, kind, text, created_s FROM memories WHERE owner IN ({marks})", owners).fetchall())
    return [nth[id(it)] > stored[content_key(it)] for it in items]

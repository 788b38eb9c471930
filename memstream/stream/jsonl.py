"""``memstream import``: memories from a JSON-lines file, one object per line.

Each line: ``{"owner", "text", "created_at"[, "kind", "importance", "cites", "metadata"]}``.
The whole file is validated before anything is written, so a bad line leaves
the stream as it was; then it is appended in batches under a progress bar.
"""

from __future__ import annotations

import json
from pathlib import Path

from tqdm import tqdm

from memstream.errors import MemstreamError
from memstream.stream.stream import MemoryStream, NewMemory, new_memory

BATCH = 512


def read_jsonl(path: Path) -> list[NewMemory]:
    if not path.is_file():
        raise MemstreamError(f"no such file: {path}")
    items = []
    with path.open(encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                fields = json.loads(line)
            except json.JSONDecodeError as e:
                raise MemstreamError(f"{path}:{line_no}: not JSON ({e.msg})") from None
            if not isinstance(fields, dict):
                raise MemstreamError(f"{path}:{line_no}: expected a JSON object per line")
            try:
                items.append(new_memory(**fields))
            except MemstreamError as e:
                raise MemstreamError(f"{path}:{line_no}: {e}") from None
    return items


def import_jsonl(stream: MemoryStream, path: Path, *, progress: bool = True) -> int:
    items = read_jsonl(path)
    stream.check_cites(items, stream.store.next_id())
    with tqdm(total=len(items), unit="mem", desc="import", disable=not progress,
              leave=False) as bar:
        for start in range(0, len(items), BATCH):
            batch = items[start : start + BATCH]
            stream.extend(batch)
            bar.update(len(batch))
    return len(items)

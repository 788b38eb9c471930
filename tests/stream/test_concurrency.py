"""Several processes on one stream: two writers and a reader at once; nothing lost, no collision,
and a stream kept open (a notebook) answers as a fresh open does."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstream.models import HashEmbedder
from memstream.stream import MemoryStream

T0 = datetime(2024, 1, 1, tzinfo=UTC)
N = 1500
OWNERS = ["ann", "bob", "cid"]


def write_file(path: Path, tag: str) -> Path:
    with path.open("w") as f:
        for i in range(N):
            f.write(json.dumps({"owner": OWNERS[i % 3], "text": f"{tag} memory {i} about topic {i % 17}",
                                "created_at": (T0 + timedelta(minutes=i)).isoformat(),
                                "importance": 1 + i % 10}) + "\n")
    return path


READER = textwrap.dedent("""
    import sys, time
    from datetime import datetime, timezone
    from memstream.models import HashEmbedder
    from memstream.stream import MemoryStream
    now = datetime(2030, 1, 1, tzinfo=timezone.utc)
    kept = MemoryStream(sys.argv[1], HashEmbedder(64))
    seen, agreed, deadline = 0, 0, time.monotonic() + 60
    while time.monotonic() < deadline:
        count = kept.count()
        assert count >= seen, (count, seen)  # a reader never sees memories disappear
        seen = count
        if "ann" in kept.owners():
            fresh = MemoryStream(sys.argv[1], HashEmbedder(64))
            before = fresh.count()
            theirs = [r.memory.id for r in fresh.retrieve("ann", "topic 3", now=now, k=5, touch=False)]
            after = fresh.count()
            mine = [r.memory.id for r in kept.retrieve("ann", "topic 3", now=now, k=5, touch=False)]
            if before == after == kept.count():  # both answered on the same memories: the same answer
                assert mine == theirs, (mine, theirs)
                agreed += 1
            fresh.close()
        if count >= int(sys.argv[2]):
            break
    print(seen, agreed)
""")


@pytest.mark.slow
def test_two_writers_and_a_reader_at_once(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with MemoryStream(db, HashEmbedder(64)) as s:  # the stream exists, and a notebook keeps it open
        s.add("ann", "the first memory, before the others", at=T0, importance=3)
    kept = MemoryStream(db, HashEmbedder(64))
    files = [write_file(tmp_path / f"{tag}.jsonl", tag) for tag in ("left", "right")]
    cli = [sys.executable, "-m", "memstream.cli", "import", str(db)]
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db), str(2 * N + 1)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    writers = [subprocess.Popen([*cli, str(f), "--embedder", "hash:64"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for f in files]
    for w in writers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0, err
    seen, agreed = map(int, out.split())
    assert seen == 2 * N + 1 and agreed > 0

    fresh = MemoryStream(db, HashEmbedder(64))
    texts = [m.text for o in fresh.owners() for m in fresh.memories(o)]
    assert len(texts) == len(set(texts)) == 2 * N + 1  # nothing lost, nothing twice
    ids = sorted(m.id for o in fresh.owners() for m in fresh.memories(o))
    assert ids == list(range(1, 2 * N + 2))

    # the stream kept open all along sees everything and answers as the fresh one does
    now = T0 + timedelta(days=30)
    assert kept.count() == fresh.count()
    for owner in OWNERS:
        for query in ("topic 3", "left memory", "right memory 99"):
            a = kept.retrieve(owner, query, now=now, k=8, touch=False)
            b = fresh.retrieve(owner, query, now=now, k=8, touch=False)
            assert [(r.memory.id, round(r.score, 6)) for r in a] == [(r.memory.id, round(r.score, 6)) for r in b]
    newest_of_ann = fresh.memories("ann")[-1]
    assert kept.get("ann", newest_of_ann.id) == newest_of_ann  # written by another process: no "no memory N"
    # its own next write lands after the others', and both sides see it
    mine = kept.add("bob", "written by the notebook afterwards", at=now, importance=5)
    assert mine.id == 2 * N + 2
    kept.retrieve("bob", "notebook", now=now, k=1)  # an access, logged
    assert fresh.retrieve("bob", "notebook afterwards", now=now, k=1, touch=False)[0].memory.id == mine.id
    assert fresh.get("bob", mine.id).last_accessed_at == now
    kept.close()
    fresh.close()


@pytest.mark.slow
def test_several_imports_of_one_file_at_once_store_it_once(tmp_path: Path) -> None:
    """The "already there" decision is taken inside each batch's write transaction, so imports racing
    on one file write each record once (and a record the file holds twice, twice)."""
    from collections import Counter

    source = write_file(tmp_path / "m.jsonl", "same")
    lines = source.read_text().splitlines() * 4  # long enough for the imports to overlap
    lines = [line.replace("same memory", f"same {i // N} memory") for i, line in enumerate(lines)]
    source.write_text("\n".join([*lines, lines[7], lines[1400]]) + "\n")  # two records the file holds twice
    db = tmp_path / "shared.db"
    with MemoryStream(db, HashEmbedder(64)):
        pass
    importers = [subprocess.Popen([sys.executable, "-m", "memstream.cli", "import", str(db), str(source),
                                   "--embedder", "hash:64"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(4)]
    outputs = [p.communicate(timeout=300) for p in importers]
    assert all(p.returncode == 0 for p in importers), outputs
    written = sum(int(out.split()[1]) for out, _ in outputs)
    with MemoryStream(db, HashEmbedder(64)) as s:
        stored = Counter((m.owner, m.text, m.created_at) for o in s.owners() for m in s.memories(o))
    wanted = Counter((r["owner"], r["text"], datetime.fromisoformat(r["created_at"]))
                     for r in map(json.loads, source.read_text().splitlines()))
    assert stored == wanted and written == 4 * N + 2

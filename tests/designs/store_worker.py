"""What the processes of tests/designs/test_store_durability.py run: writes into one design store.

Each function is a process's whole life (started by ``multiprocessing``, from a forkserver that has
imported memstream already, so a process starts in milliseconds rather than a second). A write is
acknowledged by a line appended to a file *after* ``write`` returned: what the test then demands to
find in the store, whenever the process was killed.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from random import Random
from typing import Any

from memstream.designs import Entry, entry, open_design
from memstream.errors import MemstreamError
from memstream.models import HashEmbedder, OfflineChatModel

#: When every test's entries happen (one minute apart per sequence number).
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
#: A small fast embedder for the designs that rank (the store is under test, not the ranking).
EMBED_DIM = 64


def opened(design: str, store: str) -> Any:
    """The design bound to the store the way every process of these tests opens it."""
    return open_design(design, store=store, embedder=HashEmbedder(EMBED_DIM), chat=OfflineChatModel())


def entry_of(process: int, seq: int, *, tag: str = "") -> Entry:
    """The ``seq``-th entry of ``process``: its own id, and both numbers in its text (so order is checkable)."""
    words = ("harbour", "lantern", "orchard", "violin", "glacier", "meadow", "copper", "saffron")
    return entry(text=f"process {process} entry {seq}{tag}: the {words[seq % 8]} near the {words[(seq * 3) % 8]}",
                 at=START + timedelta(minutes=seq), source=f"p{process}", id=f"p{process}{tag}-{seq}")


def batches(count: int) -> list[range]:
    """``range(count)`` cut into writes of five entries and of one, alternately."""
    cuts, start, size = [], 0, 5
    while start < count:
        cuts.append(range(start, min(count, start + size)))
        start, size = start + size, 6 - size
    return cuts


def write_many(design: str, store: str, owner: str, process: int, count: int, barrier: Any) -> None:
    """Write ``count`` entries for ``owner`` (in batches of 5 and 1, consolidating every 100), once every
    process of the test is ready (``barrier``), pausing up to a millisecond between writes (so processes
    on one owner interleave write by write, not in bursts of a time slice)."""
    rng = Random(process)
    with opened(design, store) as memory:
        barrier.wait(timeout=60)
        for cut in batches(count):
            ids = memory.write(owner, [entry_of(process, seq) for seq in cut])
            assert all(isinstance(i, int) for i in ids), ids
            time.sleep(rng.uniform(0, 0.001))
            if cut.stop % 100 == 0:
                memory.consolidate(owner, START + timedelta(minutes=cut.stop))


def acknowledge(fd: int, record: dict[str, Any]) -> None:
    """One line appended in one ``write`` call (a kill leaves a line whole or absent)."""
    os.write(fd, (json.dumps(record) + "\n").encode())


def crash_run(design: str, store: str, run: int, seed: int, acks: str, owners: Sequence[str], ready: Any) -> None:
    """Fifty writes and consolidations for random ``owners``, each write acknowledged in ``acks`` once it
    returned; the test kills this process with SIGKILL at a random moment."""
    rng = Random(seed)
    fd = os.open(acks, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    with opened(design, store) as memory:
        ready.set()
        for op in range(50):
            owner = rng.choice(owners)
            if rng.random() < 0.25:
                memory.consolidate(owner, START + timedelta(days=run, minutes=op))
                continue
            made = [entry_of(run, op * 100 + k, tag=f"r{run}") for k in range(rng.randint(1, 12))]
            ids = memory.write(owner, made)
            acknowledge(fd, {"owner": owner, "entries": [e.id for e in made], "records": ids})
    os.close(fd)


def as_reader(design: str, store: str, uid: int | None, results: Any) -> None:
    """Read ``owner`` ana's context read-only, then try to write, as user ``uid`` (None: as this user), and
    put what happened in ``results``: the context, or each refusal's message."""
    if uid is not None:
        os.setgid(uid)
        os.setuid(uid)
    seen: dict[str, Any] = {}
    try:
        with open_design(design, store=store, read_only=True, embedder=HashEmbedder(EMBED_DIM)) as memory:
            seen["context"] = memory.context("ana", "the lantern", START, 300)
    except MemstreamError as e:
        seen["read"] = str(e)
    try:
        with opened(design, store) as memory:
            memory.write("ana", [entry_of(2, 0)])
            seen["wrote"] = True
    except MemstreamError as e:
        seen["write"] = str(e)
    results.put(seen)


def watch_changes(design: str, store: str, owner: str, ready: Any, go: Any, results: Any) -> None:
    """Hold ``owner``'s memory (its context read, so a design that ranks has built its index), say so on
    ``ready``, wait for ``go`` (another process changes records meanwhile), then put in ``results`` what this
    process now reads: the records, the context for a query, and the ranking where the design ranks."""
    query = "the violin near the harbour"
    with opened(design, store) as memory:
        memory.context(owner, query, START, 2000)
        ready.set()
        go.wait(timeout=60)
        ranks = getattr(memory.design, "ranked", None)
        results.put({"records": [(r.id, r.text) for r in memory.records(owner)],
                     "context": memory.context(owner, query, START, 2000).text,
                     "ranked": [i for i, _ in ranks(owner, query, 50)] if callable(ranks) else None})

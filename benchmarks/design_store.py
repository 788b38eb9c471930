"""The design store as memory grows: a write's cost at 100 and 10,000 entries, a big store opened, bytes per entry.

    python benchmarks/design_store.py [--design full,vector] [--sizes 100,10000] [--writes 50]
                                      [--owners 1000] [--entries 1000] [--repeat 5] [--embedder hash]
                                      [--quick] [--json OUT.json] [--results [FILE]]

For every design the store keeps as rows (``memstream.designs.storable``; the others are not measured
until they keep rows), each in its own store file under a temporary folder (removed at the end):

1. **Write cost as the owner grows.** One store per size in ``--sizes``, its owner first given that many
   entries through ``open_design`` (batches of 1,000, each one write); then ``--writes`` single-entry
   writes, each committed before the next, taken in turns across the sizes (the baseline, the smallest
   size, measured in the same process, interleaved, so a busy machine slows both alike). Reported: the
   mean ms per write at each size and the largest over the smallest (issue 39's target: ≤ 1.5×), the mean
   so that work a design does every few writes (a summary folding a batch) counts; the medians beside.
2. **A big store opened for one owner.** ``--owners`` × ``--entries``: the first owner written through
   ``open_design`` (batches of 1,000); for the setup only, the other owners are copied from its rows in
   SQL, their record ids moved past the first's (the rows the same writes would make: the designs keeping
   rows now refer to their records by position, not id, in their documents; the copy is checked by
   assembling one copied owner's context, which must read as the first one's). Then, ``--repeat`` times,
   for a different owner each time: open the store (``open_design``), assemble the owner's context for a
   question at a 2,000-token budget, close. Reported: median and worst ms (target: ≤ 200 ms on 2 cores).
3. **Bytes per entry**: the big store's file size (after a checkpoint) over the entries it holds.

BLAS is pinned to one thread. The embedder (default ``hash``, the offline stand-in) is what ``vector``
embeds its records with when an owner is read, so its figure in (2) grows with a slower embedder.
``--quick`` is a tiny run that checks the benchmark works (the tests run it); its figures mean nothing.
``--results`` adds the rows to ``benchmarks/results/design_store.json`` (or FILE), which the docs' results page shows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits
from tqdm import tqdm

from memstream.designs import DESIGNS, BoundDesign, Entry, entry, open_design, storable
from memstream.models import Embedder, OfflineChatModel, make_embedder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

T0 = datetime(2026, 1, 1, tzinfo=UTC)
BATCH = 1_000
BUDGET = 2_000
QUESTION = "What did I say about the garden in Lisbon?"
TOPICS = ["the garden", "my sister", "the pottery class", "a trip to Lisbon", "the charity race", "work",
          "the new cat", "a book about birds", "dinner plans", "the dentist"]
TARGET_RATIO, TARGET_MS = 1.5, 200.0
TITLE = "The design store as memory grows"
ABOUT = ("Hash embedder unless the command names another. `write_ms@N` (mean) and `write_ms_median@N`: ms of one "
         "single-entry write to an owner of N entries; `open_context_ms`: open a store of owners × entries and "
         "assemble one owner's context (2,000 tokens), median of the opens. A design whose owners cannot be copied "
         "row for row (letta: its documents name record ids) has no open measured here (docs/memory.md: what a store "
         "costs).")
QUICK = {"sizes": [10, 100], "writes": 5, "owners": 6, "entries": 30, "repeat": 2}


def said(i: int) -> Entry:
    """The ``i``-th turn of an owner: a sentence of conversational length, different for every ``i``."""
    topic = TOPICS[i % len(TOPICS)]
    return entry(text=f"Turn {i}: I talked about {topic} again, for the {i // len(TOPICS) + 1}th time, "
                      f"and said it went {('well', 'badly', 'as planned', 'late')[i % 4]}.",
                 at=T0 + timedelta(minutes=i), session=f"s{i // 50}")


def grow(memory: BoundDesign, owner: str, start: int, count: int) -> None:
    """Give ``owner`` entries ``start``..``start + count`` through the design, a batch per write."""
    for first in range(start, start + count, BATCH):
        memory.write(owner, [said(i) for i in range(first, min(start + count, first + BATCH))])


def write_cost(name: str, folder: Path, sizes: list[int], writes: int, embedder: Embedder) -> dict[str, Any]:
    """Mean (the target's: work done every few writes counts) and median ms of one single-entry write at
    each owner size, the sizes taken in turns."""
    chat = OfflineChatModel()
    times: dict[int, list[float]] = {n: [] for n in sizes}
    with ExitStack() as opened:
        memories = {}
        for n in tqdm(sizes, desc=f"{name}: grow", unit="store", leave=False):
            memory = memories[n] = opened.enter_context(open_design(
                name, store=folder / f"{name}.grown-{n}.db", embedder=embedder, chat=chat))
            grow(memory, "ana", 0, n)
            memory.write("ana", [said(n)])  # the owner read, as a long-running writer holds it
        for k in tqdm(range(writes), desc=f"{name}: writes", unit="round", leave=False):
            for n in sizes:
                started = time.perf_counter()
                memories[n].write("ana", [said(n + 1 + k)])
                times[n].append(time.perf_counter() - started)
    mean = {n: statistics.fmean(t) * 1000 for n, t in times.items()}
    median = {n: statistics.median(t) * 1000 for n, t in times.items()}
    return {"write_ms": {str(n): round(mean[n], 3) for n in sizes},
            "write_ms_median": {str(n): round(median[n], 3) for n in sizes},
            "write_ratio": round(mean[sizes[-1]] / mean[sizes[0]], 2),
            "write_ratio_median": round(median[sizes[-1]] / median[sizes[0]], 2)}


class NotCopyable(Exception):
    """A design whose owners cannot be copied row for row (its documents name record ids)."""


def build(name: str, path: Path, owners: int, entries: int, embedder: Embedder) -> None:
    """A store of ``owners`` x ``entries``: the first owner through the design, the others copied in SQL
    (:class:`NotCopyable` if a copy does not read as the owner it was copied from)."""
    with open_design(name, store=path, embedder=embedder, chat=OfflineChatModel()) as memory:
        grow(memory, owner_of(0), 0, entries)
        db = memory.held.store.db
        where = (name, "", owner_of(0))
        (most,) = db.execute("SELECT MAX(id) FROM design_records WHERE design=? AND scope=? AND owner=?",
                             where).fetchone()
        stride = int(most) + 1
        db.execute("BEGIN IMMEDIATE")
        for k in tqdm(range(1, owners), desc=f"{name}: copy owners", unit="owner", leave=False):
            copied = (owner_of(k), *where)
            db.execute("INSERT INTO design_records (design, scope, owner, id, key, text, at, source, kind, session, "
                       "extra) SELECT design, scope, ?, id + ?, key, text, at, source, kind, session, extra "
                       "FROM design_records WHERE design=? AND scope=? AND owner=? ORDER BY seq",
                       (owner_of(k), k * stride, *where))
            for table in ("design_docs", "design_logs"):
                columns = "design, scope, owner, name, value"
                db.execute(f"INSERT INTO {table} ({columns}) SELECT design, scope, ?, name, value FROM {table} "
                           f"WHERE design=? AND scope=? AND owner=?", copied)
            db.execute("INSERT INTO design_owners SELECT design, scope, ?, version FROM design_owners "
                       "WHERE design=? AND scope=? AND owner=?", copied)
        db.execute("UPDATE design_counters SET next=? WHERE design=?", (owners * stride + 1, name))
        db.execute("COMMIT")
        memory.held.store.checkpoint()
    with open_design(name, store=path, embedder=embedder) as memory:
        first, *copies = (memory.context(owner_of(k), QUESTION, _now(entries), BUDGET).text
                          for k in dict.fromkeys((0, owners // 2, owners - 1)))
        if any(copy != first for copy in copies):
            raise NotCopyable(f"{name}: an owner copied in SQL does not read as the one written (its documents "
                              "name record ids), and a store of this size written through the design takes hours")


def owner_of(k: int) -> str:
    return f"owner-{k:05d}"


def _now(entries: int) -> datetime:
    return T0 + timedelta(minutes=entries + 60)


def open_and_assemble(name: str, path: Path, owners: int, entries: int, repeat: int,
                      embedder: Embedder) -> dict[str, Any]:
    """Open the store and assemble one owner's context, for ``repeat`` owners spread over the store."""
    times = []
    for k in tqdm(range(repeat), desc=f"{name}: open + context", unit="open", leave=False):
        owner = owner_of((k * 7919 + owners // 2) % owners)
        started = time.perf_counter()
        with open_design(name, store=path, embedder=embedder) as memory:
            context = memory.context(owner, QUESTION, _now(entries), BUDGET)
        times.append(time.perf_counter() - started)
        tokens = context.tokens  # (a profile of the benchmark's plain turns may hold nothing: 0 is a figure too)
    return {"open_context_ms": round(statistics.median(times) * 1000, 1),
            "open_context_ms_worst": round(max(times) * 1000, 1), "context_tokens": tokens}


def bytes_per_entry(path: Path, owners: int, entries: int) -> float:
    size = sum(p.stat().st_size for p in (path, path.with_name(f"{path.name}-wal")) if p.exists())
    return round(size / (owners * entries), 1)


def run(designs: list[str], sizes: list[int], writes: int, owners: int, entries: int, repeat: int,
        embedder_name: str) -> dict[str, Any]:
    embedder = make_embedder(embedder_name)
    rows = []
    with tempfile.TemporaryDirectory(prefix="memstream-design-store-") as tmp:
        folder = Path(tmp)
        for name in tqdm(designs, desc="designs", unit="design"):
            row: dict[str, Any] = {"design": name, **write_cost(name, folder, sizes, writes, embedder)}
            big = folder / f"{name}.big.db"
            started = time.perf_counter()
            try:
                build(name, big, owners, entries, embedder)
            except NotCopyable as e:  # said in the row; its write cost still measured
                row.update(build_s=None, open_context_ms=None, open_context_ms_worst=None, bytes_per_entry=None,
                           meets_targets=None, open_not_measured=str(e))
                rows.append(row)
                continue
            row["build_s"] = round(time.perf_counter() - started, 1)
            row.update(open_and_assemble(name, big, owners, entries, repeat, embedder))
            row["bytes_per_entry"] = bytes_per_entry(big, owners, entries)
            row["meets_targets"] = row["write_ratio"] <= TARGET_RATIO and row["open_context_ms"] <= TARGET_MS
            rows.append(row)
    return {"sizes": sizes, "writes": writes, "owners": owners, "entries": entries, "repeat": repeat,
            "embedder": embedder.name, "budget": BUDGET, "targets": {"write_ratio": TARGET_RATIO,
                                                                     "open_context_ms": TARGET_MS},
            "not_measured": [n for n in DESIGNS if not storable(n)], "designs": rows}


def table(result: dict[str, Any]) -> str:
    small, large = result["sizes"][0], result["sizes"][-1]
    lines = [f"write: mean of {result['writes']} single-entry writes at {small:,} and {large:,} entries; "
             f"open + context: {result['owners']:,} owners x {result['entries']:,} entries, median of "
             f"{result['repeat']} (embedder {result['embedder']}, budget {result['budget']})",
             f"{'design':<16}{f'ms @{small:,}':>12}{f'ms @{large:,}':>12}{'ratio':>8}{'open+ctx ms':>13}"
             f"{'worst':>8}{'B/entry':>9}{'build s':>9}  targets (≤ {TARGET_RATIO}x, ≤ {TARGET_MS:.0f} ms)"]
    for r in result["designs"]:
        w = r["write_ms"]
        lines.append(f"{r['design']:<16}{w[str(small)]:>12}{w[str(large)]:>12}{r['write_ratio']:>8}"
                     f"{r['open_context_ms']!s:>13}{r['open_context_ms_worst']!s:>8}{r['bytes_per_entry']!s:>9}"
                     f"{r['build_s']!s:>9}  "
                     f"{'open not measured' if r['meets_targets'] is None else 'met' if r['meets_targets'] else 'MISSED'}")
    if result["not_measured"]:
        lines.append(f"not measured (not kept as rows yet): {', '.join(result['not_measured'])}")
    return "\n".join(lines)


def sizes_arg(text: str) -> list[int]:
    try:
        sizes = sorted({int(x) for x in text.split(",")})
    except ValueError:
        sizes = []
    if len(sizes) < 2 or sizes[0] <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give two or more positive sizes, e.g. 100,10000")
    return sizes


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--design", default=",".join(n for n in DESIGNS if storable(n)),
                   help="designs kept as rows, a comma list (default: every one)")
    p.add_argument("--sizes", type=sizes_arg, default=[100, 10_000], help="owner sizes for the write cost")
    p.add_argument("--writes", type=int, default=50, help="timed writes at each size")
    p.add_argument("--owners", type=int, default=1_000)
    p.add_argument("--entries", type=int, default=1_000, help="entries per owner in the big store")
    p.add_argument("--repeat", type=int, default=5, help="opens of the big store, each for another owner")
    p.add_argument("--embedder", default="hash")
    p.add_argument("--quick", action="store_true", help=f"a tiny run that checks this works ({QUICK})")
    p.add_argument("--json", metavar="OUT", help="also write the results here as JSON")
    add_results_flag(p, "design_store")
    args = p.parse_args(argv)
    if args.quick:
        vars(args).update(QUICK)
    designs = [n.strip() for n in args.design.split(",") if n.strip()]
    unknown = [n for n in designs if not storable(n)]
    if unknown or not designs:
        print(f"design_store.py: {', '.join(unknown) or args.design!r} not kept as rows; use some of "
              f"{', '.join(n for n in DESIGNS if storable(n))}", file=sys.stderr)
        return 2
    if min(args.writes, args.owners, args.entries, args.repeat) <= 0 or args.owners < 2:
        print("design_store.py: --writes, --entries and --repeat must be positive, --owners at least 2",
              file=sys.stderr)
        return 2
    with threadpool_limits(limits=1):
        result = run(designs, args.sizes, args.writes, args.owners, args.entries, args.repeat, args.embedder)
    print(table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.results:
        record(args.results, "design_store", TITLE,
               [{k: v for k, v in r.items() if k != "open_not_measured"} for r in result["designs"]], about=ABOUT,
               argv=None if argv is None else ["design_store.py", *argv])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

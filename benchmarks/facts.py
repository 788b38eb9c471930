"""Hard delete of a source with 1,000 derived facts, beside a naive delete in the same process.

One facts file (WAL, on disk) holds ``--others`` facts of the same owner from other sources and one
source from which ``--derived`` facts were extracted, each derived fact also updating an earlier
version (so the delete follows provenance, then ``UPDATES``, and removes 2 x ``--derived`` facts).
Measured, each on a fresh copy of the file, median of ``--repeat`` runs:

- ``erase``: ``memstream.facts.erase_source``: the provenance walk, every row, edge, entity, cached
  vector and FTS entry, the profile regenerated, the audit record, then VACUUM and a TRUNCATE
  checkpoint (the deleted bytes gone from the files);
- ``erase_no_purge``: the same transaction without the VACUUM and checkpoint;
- ``naive``: the baseline a store without provenance would run: ``DELETE FROM facts`` of the same
  ids in one transaction (the FTS trigger still fires), nothing followed and nothing purged.

The ratios say what following provenance and purging cost over the naive delete. Vectors are
384-d (MiniLM's size) from the hash stand-in; BLAS is pinned to one thread.

    python benchmarks/facts.py [--derived 1000] [--others 10000] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from threadpoolctl import threadpool_limits
from tqdm import tqdm

from memstream.facts import Change, FactStore, NewFact, Source, apply, erase_source
from memstream.models import HashEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_file import add_results_flag, record  # benchmarks/ is not a package

T0 = datetime(2026, 1, 1, tzinfo=UTC)
OWNER = "ann"
EMBEDDER = HashEmbedder(384)


def build(path: Path, derived: int, others: int) -> list[int]:
    """The file; the ids of the facts the hard delete must remove."""
    store = FactStore(path, EMBEDDER)
    batch = 500
    for start in tqdm(range(0, others, batch), desc="other sources", unit="batch", leave=False):
        changes = [Change("new", NewFact(f"Other fact number {i} about topic {i % 97} and place {i % 13}"))
                   for i in range(start, min(others, start + batch))]
        apply(store, OWNER, Source(f"other-{start}", f"a message with {len(changes)} facts", T0), changes)
    earlier = apply(store, OWNER, Source("earlier", "the first versions", T0 + timedelta(days=1)),
                    [Change("new", NewFact(f"Setting {i} is {i}")) for i in range(derived)])
    later = apply(store, OWNER, Source("deleted", "the message to delete", T0 + timedelta(days=2)),
                  [Change("update", NewFact(f"Setting {i} is {i + 1}"), e.fact_id) for i, e in enumerate(earlier)])
    store.close()
    return sorted([a.fact_id for a in earlier] + [a.fact_id for a in later])


def copy(src: Path, into: Path) -> Path:
    for f in into.iterdir():
        f.unlink()
    for suffix in ("", "-wal"):
        if Path(f"{src}{suffix}").exists():
            shutil.copy(f"{src}{suffix}", into / f"f.db{suffix}")
    return into / "f.db"


def erase(path: Path, purge: bool) -> float:
    store = FactStore(path, EMBEDDER)
    started = time.perf_counter()
    erase_source(store, OWNER, "deleted", T0 + timedelta(days=3), purge=purge)
    elapsed = time.perf_counter() - started
    store.close()
    return elapsed


def naive(path: Path, ids: list[int]) -> float:
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        started = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.executemany("DELETE FROM facts WHERE id=?", [(i,) for i in ids])
        db.execute("COMMIT")
        return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--derived", type=int, default=1000)
    p.add_argument("--others", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", action="store_true")
    add_results_flag(p, "facts")
    args = p.parse_args()
    with threadpool_limits(1), tempfile.TemporaryDirectory() as tmp:
        base, work = Path(tmp) / "base", Path(tmp) / "work"
        base.mkdir()
        work.mkdir()
        ids = build(base / "f.db", args.derived, args.others)
        times: dict[str, list[float]] = {"erase": [], "erase_no_purge": [], "naive": []}
        for _ in tqdm(range(args.repeat), desc="deletes", unit="round", leave=False):
            times["erase"].append(erase(copy(base / "f.db", work), purge=True))
            times["erase_no_purge"].append(erase(copy(base / "f.db", work), purge=False))
            times["naive"].append(naive(copy(base / "f.db", work), ids))
        size_mb = sum(f.stat().st_size for f in base.iterdir()) / 1e6
    ms = {k: round(1000 * statistics.median(v), 1) for k, v in times.items()}
    result = {"derived_facts": args.derived, "facts_removed": len(ids), "other_facts": args.others,
              "file_mb": round(size_mb, 1), "median_ms": ms,
              "erase_over_naive": round(ms["erase"] / ms["naive"], 2),
              "erase_no_purge_over_naive": round(ms["erase_no_purge"] / ms["naive"], 2)}
    if args.results:
        record(args.results, "facts", __doc__.splitlines()[0], [result])
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{args.derived} derived facts ({len(ids)} with their earlier versions) in a {size_mb:.1f} MB file with "
              f"{args.others} other facts; median of {args.repeat}:")
        for k, v in ms.items():
            print(f"  {k:<16}{v:>9.1f} ms")
        print(f"  erase / naive {result['erase_over_naive']}x; without the purge {result['erase_no_purge_over_naive']}x")


if __name__ == "__main__":
    main()

"""Damaged rows: what makes a stored memory unreadable, found in one SQL pass (and one numpy pass).

Why: one damaged row (an unreadable date, a NaN vector, a memory citing itself, a negative id)
once crashed ``recall``, ``inspect`` and ``tree``, and ``check`` passed it. The same screen now
serves both: a stream skips the rows it finds (with one warning naming ``memstream check``) and
``memstream check`` reports each with its reason. Rows are append-only, so a row found sound
stays sound; only rows not screened yet are screened.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime

import numpy as np

#: Epoch seconds of 0001-01-01 and 9999-12-31T23:59:59 (UTC): the times a datetime can hold.
MIN_EPOCH_S, MAX_EPOCH_S = -62135596800, 253402300799

_JSON_ARRAY = "CASE WHEN json_valid({c}) THEN json_type({c}) = 'array' ELSE 0 END"



def unreadable_time_sql(column: str) -> str:
    """The SQL condition true when ``column`` is not an ISO time with a zone that Python reads (a day that
    does not exist, such as 02-30, is caught by reading the date back: julianday takes it as 03-02)."""
    c = column
    return (f"typeof({c}) != 'text' OR julianday({c}) IS NULL OR {c} NOT GLOB "
            f"'[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9][T ][0-2][0-9]:[0-5][0-9]*' OR {c} GLOB '0000*' "
            f"OR NOT ({c} GLOB '*[+-][0-9][0-9]:[0-9][0-9]' OR {c} GLOB '*Z') "
            f"OR date(julianday(substr({c}, 1, 10))) IS NOT substr({c}, 1, 10) "
            f"OR strftime('%H:%M', '2000-01-01 ' || substr({c}, 12, 5)) IS NOT substr({c}, 12, 5)")


#: (why the row is damaged, the SQL condition that finds it), first match reported.
CHECKS: tuple[tuple[str, str], ...] = (
    ("its id is not a positive whole number", "typeof(id) != 'integer' OR id < 1"),
    ("its owner, kind or text is not text", "typeof(owner) != 'text' OR typeof(kind) != 'text' "
                                            "OR typeof(text) != 'text'"),
    ("its creation time is unreadable", unreadable_time_sql("created_at")),
    ("its creation time is out of range", "typeof(created_s) NOT IN ('real', 'integer') "
                                          f"OR created_s NOT BETWEEN {MIN_EPOCH_S} AND {MAX_EPOCH_S}"),
    ("its importance is not a whole number from 1 to 10", "typeof(importance) != 'integer' "
                                                         "OR importance NOT BETWEEN 1 AND 10"),
    ("its vectors are not {dim}-d float32 rows", "typeof(embedding) != 'blob' OR length(embedding) = 0 "
                                                 "OR :row_bytes = 0 OR length(embedding) % :row_bytes != 0"),
    ("its citations are unreadable", "typeof(cites) != 'text' OR NOT " + _JSON_ARRAY.format(c="cites")),
    ("it cites itself, a later memory or something not an id",
     "CASE WHEN " + _JSON_ARRAY.format(c="cites") + " THEN EXISTS (SELECT 1 FROM json_each(memories.cites) "
     "WHERE typeof(value) != 'integer' OR value >= memories.id) ELSE 0 END"),
    ("its metadata is unreadable", "typeof(metadata) != 'text' OR NOT CASE WHEN json_valid(metadata) "
                                   "THEN json_type(metadata) = 'object' ELSE 0 END"),
)
NON_FINITE = "its vectors hold NaN or infinity"


def screen(db: sqlite3.Connection, dim: int, after_id: int | None = None) -> dict[int, str]:
    """The damaged rows (id -> why) among the memories with ids above ``after_id`` (all if None).

    A row whose id is not an integer is reported under its rowid."""
    reasons = " ".join(f"WHEN {condition} THEN :why{i}" for i, (_, condition) in enumerate(CHECKS))
    where = "" if after_id is None else "WHERE id > :after OR typeof(id) != 'integer'"
    sql = (f"SELECT rowid, why FROM (SELECT rowid, CASE {reasons} END AS why FROM memories {where}) "
           "WHERE why IS NOT NULL")
    names: dict[str, object] = {"row_bytes": 4 * dim, "after": after_id or 0}
    names.update({f"why{i}": why.format(dim=dim) for i, (why, _) in enumerate(CHECKS)})
    return dict(db.execute(sql, names).fetchall())


def unreadable_time(text: object) -> bool:
    """Whether Python cannot read ``text`` as a time with a zone (what the screen's SQL approximates)."""
    if not isinstance(text, str):
        return True
    try:
        return datetime.fromisoformat(text).utcoffset() is None
    except (TypeError, ValueError):
        return True


def non_finite(rows: Iterable[tuple[int, bytes]]) -> list[int]:
    """The ids whose vectors hold NaN or infinity (rows of whole float32 vectors)."""
    rows = list(rows)
    if not rows:
        return []
    everything = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
    if np.isfinite(everything).all():  # the usual case: one vectorised pass
        return []
    return [mid for mid, blob in rows if not np.isfinite(np.frombuffer(blob, dtype=np.float32)).all()]


def describe(path: str, damaged: dict[int, str]) -> str:
    """One warning line for the rows a read skipped."""
    shown = ", ".join(f"{mid} ({why})" for mid, why in sorted(damaged.items())[:3])
    more = f" and {len(damaged) - 3} more" if len(damaged) > 3 else ""
    return (f"{path}: skipped {len(damaged)} damaged memor{'y' if len(damaged) == 1 else 'ies'}: {shown}{more}; "
            f"run memstream check {path} to see every problem")

"""The owner's profile: a summary derived from their current preferences, kept in the file.

Made without a model (the owner's current preference facts, most salient first, joined), so it can
be regenerated inside the transaction that changes what it is built from: a hard delete or a soft
delete of a preference leaves no profile that still says it. It names the facts it was built from.
"""

from __future__ import annotations

import json
import sqlite3

#: Preferences a profile holds at most.
PROFILE_FACTS = 20


def regenerate(db: sqlite3.Connection, tenant: str, owner: str, at_s: float) -> str:
    """Rebuild ``owner``'s profile from their current preferences at ``at_s`` (inside a write); its text."""
    rows = db.execute("SELECT id, text FROM facts WHERE tenant=? AND owner=? AND kind='preference' AND is_latest=1 "
                      "AND deleted_s IS NULL AND (expires_s IS NULL OR expires_s > ?) ORDER BY salience DESC, id "
                      "LIMIT ?", (tenant, owner, at_s, PROFILE_FACTS)).fetchall()
    if not rows:
        db.execute("DELETE FROM profiles WHERE tenant=? AND owner=?", (tenant, owner))
        return ""
    text = " ".join(t if t.endswith((".", "!", "?")) else t + "." for _, t in rows)
    db.execute("INSERT OR REPLACE INTO profiles VALUES (?,?,?,?,?)",
               (tenant, owner, text, json.dumps([i for i, _ in rows]), at_s))
    return text


def profile(db: sqlite3.Connection, tenant: str, owner: str) -> tuple[str, list[int]]:
    """``owner``'s profile and the facts it was built from ("" and [] if none)."""
    row = db.execute("SELECT text, fact_ids FROM profiles WHERE tenant=? AND owner=?", (tenant, owner)).fetchone()
    return (row[0], json.loads(row[1])) if row else ("", [])

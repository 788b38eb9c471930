"""The first state format (design state files written before state was typed), read into today's.

Format 1 kept each design's state as its code happened to hold it: one record list across owners,
summaries holding whole copies of the records they wait on, ratings and archival passages keyed by
record id across owners. Format 2 keeps it per owner (:mod:`memstream.designs.state`). A format 1
file still loads: its JSON is rearranged here, then validated as the design's ``State`` like any
other file, so a damaged one is refused the same way. A file saved again is written in format 2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: A format 1 state's JSON, as read (a real JSON boundary: what an old file holds).
Json = dict[str, Any]


def upgrade(design: str, state: Json) -> Json:
    """``state``, written in format 1 by ``design``, as format 2 JSON."""
    return _UPGRADES[design](state)


def _records(log: Json) -> dict[str, list[Json]]:
    """Each owner's records (without the owner), owners in the order of their first record, as the
    first format's loader made them."""
    owners: dict[str, list[Json]] = {}
    for r in sorted(log["records"], key=lambda r: r["id"]):
        owners.setdefault(r["owner"], []).append({k: v for k, v in r.items() if k != "owner"})
    return owners


def _summary(s: Json) -> Json:
    """A summary with the records it waits on named by id (format 1 copied them whole)."""
    return {"text": s["text"], "covers": s["covers"], "pending": [r["id"] for r in s["pending"]],
            "calls": s["calls"], "skipped": s.get("skipped", [])}


def _owner_of(records: dict[str, list[Json]]) -> dict[int, str]:
    return {r["id"]: owner for owner, mine in records.items() for r in mine}


def _log(state: Json) -> Json:
    records = _records(state["log"])
    return {"next_id": state["log"]["next_id"], "owners": {o: {"records": mine} for o, mine in records.items()}}


def _summarised(state: Json) -> Json:
    records = _records(state["log"])
    owners = {o: {"records": records.get(o, []), "summary": _summary(s)} for o, s in state["summaries"].items()}
    owners |= {o: {"records": mine} for o, mine in records.items() if o not in owners}
    return {"next_id": state["log"]["next_id"], "owners": owners}


def _tiered(state: Json) -> Json:
    upgraded = _summarised(state)
    owner_of = _owner_of(_records(state["log"]))
    for key, rating in state["importance"].items():
        upgraded["owners"][owner_of[int(key)]].setdefault("importance", {})[int(key)] = rating
    return upgraded


def _letta(state: Json) -> Json:
    records = _records(state["log"])
    owner_of = _owner_of(records)
    attached: dict[str, list[int]] = state["blocks"]["attached"]
    owners: dict[str, Json] = {}
    for o in dict.fromkeys([*state["owners"], *records, *attached]):
        agent = state["owners"].get(o)
        owners[o] = {"records": records.get(o, []), "blocks": attached.get(o, []),
                     "agent": None if agent is None else {**agent, "summary": _summary(agent["summary"])}}
    for key, cites in state["archival"].items():
        owners[owner_of[int(key)]].setdefault("passages", {})[int(key)] = cites
    return {"next_id": state["log"]["next_id"], "next_block": state["blocks"]["next_id"],
            "blocks": state["blocks"]["blocks"], "owners": owners}


def _profile(state: Json) -> Json:
    upgraded = _log(state)
    owners = upgraded["owners"]
    for v in state["versions"]:
        owners.setdefault(v["owner"], {"records": []}).setdefault("versions", []).append(
            {k: x for k, x in v.items() if k != "owner"})
    return {**upgraded, "counters": state["counters"]}


def _stream(state: Json) -> Json:
    stream = state["stream"]
    owners: dict[str, Json] = {o: {"memories": [], "accesses": [], "reflected_through": through}
                               for o, through in state["reflected"].items()}
    owner_of = {}
    for m in stream["memories"]:
        owner_of[m["id"]] = m["owner"]
        owners.setdefault(m["owner"], {"memories": [], "accesses": []})["memories"].append(
            {k: v for k, v in m.items() if k != "owner"})
    for mid, at in stream["accesses"]:
        owners[owner_of[mid]]["accesses"].append([mid, at])
    return {"embedder": stream["embedder"], "owners": owners}


_UPGRADES: dict[str, Callable[[Json], Json]] = {
    "full": _log, "vector": _log, "buffer-summary": _summarised, "tiered": _tiered, "letta": _letta,
    "profile": _profile, "stream": _stream, "facts": lambda state: state,  # the facts file's bytes, as they were
}

"""A run as one self-contained HTML page: the town, the agents moving over simulated time, what
they say, the objects' states, and each agent's memories one click away.

Everything the page shows is packed into it as compact JSON (one string table; events and memories
as arrays of indexes and seconds from the start), and the page's own script and style are inline:
it opens from disk with no server and makes no request (its content security policy forbids any).
"""

from __future__ import annotations

import json
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

from memstream.errors import MemstreamError
from memstream.sim import RunDir, measures
from memstream.stream import OBSERVATION, Memory

TEMPLATE = Path(__file__).with_name("template.html")
#: Memories kept per agent in the page: every one that is not an observation (the newest, up to this many),
#: and observations spread evenly over the run in the room left (a quarter of it at least).
MEMORIES_PER_AGENT = 400


class _Strings:
    """A string table: each distinct text once in the page, referred to by its index."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        return self.index.setdefault(text, len(self.index))

    def table(self) -> list[str]:
        return list(self.index)


def page_data(run: RunDir, fact: str | None = None) -> dict[str, Any]:
    """What the page needs from a run, compacted (times are seconds from the run's start)."""
    s = _Strings()
    t0 = run.config.start.timestamp()
    names = run.agents
    agent_of = {n: i for i, n in enumerate(names)}
    residents = {r.name: r for r in run.town.residents}
    buildings = [{"name": b.name, "x": b.x, "y": b.y, "area": a.name} for a in run.town.areas for b in a.buildings]
    moves: list[list[list[int]]] = [[] for _ in names]
    says, objects = [], []
    for e in run.events():
        t = round(datetime.fromisoformat(e["time"]).timestamp() - t0)
        if not e["agent"]:
            objects.append([t, s(e["location"]), s(e["action"])])
        elif e["agent"] in agent_of:
            i = agent_of[e["agent"]]
            if "utterance" in e:
                says.append([t, i, s(e["utterance"]), s(e["action"].removeprefix("says to "))])
            elif not e["action"].startswith(("plans the day", "reflects", "is now:", "hears a whisper")):
                moves[i].append([t, s(e["location"]), s(e["action"])])
    memories, plans = [], []
    for name in names:
        everything = run.stream.memories(name) if run.stream.has(name) else []
        memories.append([[m.id, round(m.created_at.timestamp() - t0), s(m.kind), m.importance, s(m.text),
                          list(m.cites)] for m in _kept(everything)])
        plans.append([[round(m.created_at.timestamp() - t0),
                       [[round(datetime.fromisoformat(b["start"]).timestamp() - t0), b["minutes"], s(b["activity"]),
                         s(b["location"])] for b in m.metadata["plan"]["blocks"]]]
                      for m in everything if m.kind == "plan" and isinstance(m.metadata.get("plan"), dict)])
    knows = {}
    if fact:
        knows = {agent_of[a]: round(ms[0].created_at.timestamp() - t0) for a, ms in measures.knowers(run, fact).items()
                 if a in agent_of}
    return {"run": run.path.name, "town": run.town.name, "start": run.config.start.isoformat(),
            "end": round(run.end.timestamp() - t0), "offset_min": _offset_minutes(run.config.start),
            "buildings": buildings, "paths": [list(p) for p in run.town.paths],
            "agents": [{"name": n, "home": residents[n].home, "about": residents[n].describe()} for n in names],
            "strings": s.table(), "moves": moves, "says": says, "objects": objects, "memories": memories,
            "plans": plans,
            "fact": fact or "", "knows": knows}


def _kept(memories: list[Memory], cap: int = MEMORIES_PER_AGENT) -> list[Memory]:
    """At most about ``cap`` of an agent's memories, so that any time of the run has some to show."""
    if len(memories) <= cap:
        return memories
    others = [m for m in memories if m.kind != OBSERVATION][-cap:]
    seen = [m for m in memories if m.kind == OBSERVATION]
    step = max(1, -(-len(seen) // max(cap - len(others), cap // 4)))
    keep = {m.id for m in others} | {m.id for m in seen[::step]}
    return [m for m in memories if m.id in keep]


def _offset_minutes(t: datetime) -> int:
    offset = t.utcoffset()
    return round(offset.total_seconds() / 60) if offset else 0


def write_page(run_dir: str | Path, out: str | Path, *, fact: str | None = None) -> tuple[Path, int]:
    """Write the page for ``run_dir`` to ``out``; its path and size in bytes."""
    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise MemstreamError(f"-o {out} must end in .html")
    if out.is_dir() or not out.parent.is_dir():
        raise MemstreamError(f"-o {out}: name a file in an existing folder")
    with RunDir.open(run_dir) as run:
        html = render(run, fact)
    tmp = out.with_name(out.name + ".partial")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    return out, out.stat().st_size


def render(run: RunDir, fact: str | None = None, *, served: bool = False) -> str:
    """The page's HTML. ``served``: from ``memstream view --serve``, whose search box asks its server."""
    data = {**page_data(run, fact), "served": served}
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    html = TEMPLATE.read_text(encoding="utf-8").replace("__TITLE__", escape(f"{data['town']}: {data['run']}"))
    html = html.replace("__CONNECT__", " connect-src 'self';" if served else "")
    return html.replace("__DATA__", payload)


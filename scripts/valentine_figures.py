"""The README's valentine figures: the scenario as bundled, the party only from the whisper, and a scenario
of another kind, each measured the same way (knowers, planned, attended, network density).

    PYTHONPATH=. python scripts/valentine_figures.py --out runs/figures [--json figures.json] [--embedder hash]

- ``bundled``: ``memstream run --scenario valentine`` as shipped. The town file (like the reference code's)
  already gives Isabella the party as her situation and a 17:00 routine stroke for it, so the whisper adds
  little and many knowers saw her preparing.
- ``whisper-only``: the same scenario on a copy of the town (in ``OUT``) with those two lines removed:
  the party exists only in Isabella's whisper.
- ``tax-advice``: a scenario of another kind, not a party: Yuriko Yamamoto, a tax lawyer who knows nobody
  in the town file, offers a free tax-advice session at Town Hall on the 14th from 6 to 8 pm.

Offline by default (the rule-based stand-in: its behaviour, not an LLM's). Each run is a fresh directory.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from memstream.sim import RunDir, load_scenario, measures, scenario_run
from memstream.sim.town.world import default_town_path, load_town

PARTY = "Valentine's Day party"
TAX = {"name": "tax-advice", "description": "Yuriko's free tax-advice session at Town Hall on the 14th",
       "start": "2023-02-13T06:00:00-08:00", "hours": 38,
       "whispers": [{"agent": "Yuriko Yamamoto", "text": "Yuriko Yamamoto is offering free tax advice at Town Hall "
                     "on February 14th from 6 to 8 pm and wants to tell everyone she meets"}]}
#: (name, fact, place, from, to) of what each scenario's figures measure.
MEASURED = {"bundled": (PARTY, "Hobbs Cafe", "2023-02-14T17:00:00-08:00", "2023-02-14T19:00:00-08:00"),
            "whisper-only": (PARTY, "Hobbs Cafe", "2023-02-14T17:00:00-08:00", "2023-02-14T19:00:00-08:00"),
            "tax-advice": ("tax advice", "Town Hall", "2023-02-14T18:00:00-08:00", "2023-02-14T20:00:00-08:00")}


def whisper_only_town(folder: Path) -> Path:
    """A copy of the bundled town without Isabella's party: her situation and her routine's party stroke gone."""
    town = load_town(default_town_path())
    residents = []
    for r in town.residents:
        if r.name == "Isabella Rodriguez":
            r = r.model_copy(update={"situation": "", "routine": [i for i in r.routine if "party" not in
                                                                  i.activity.lower()]})
        residents.append(r)
    path = folder / "town-whisper-only.json"
    path.write_text(town.model_copy(update={"residents": residents}).model_dump_json(indent=1))
    return path


def scenarios(folder: Path) -> dict[str, Path | str]:
    """Each scenario measured: a bundled name or a file written in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    bundled = load_scenario("valentine")
    variant = bundled.model_copy(update={"name": "valentine-whisper-only", "town": str(whisper_only_town(folder))})
    (folder / "valentine-whisper-only.json").write_text(variant.model_dump_json(indent=1))
    (folder / "tax-advice.json").write_text(json.dumps(TAX, indent=1))
    return {"bundled": "valentine", "whisper-only": folder / "valentine-whisper-only.json",
            "tax-advice": folder / "tax-advice.json"}


def measure(out: Path, name: str) -> dict[str, Any]:
    """The figures of one run: who knew the fact (and how many from more than a sighting: a conversation, a
    whisper, their own situation), who planned it and came, the network's density, the run's cost."""
    fact, place, start, end = MEASURED[name]
    with RunDir.open(out) as run:
        knew = measures.diffusion(run, fact)
        told = [a for a, ms in measures.knowers(run, fact).items() if any(m.kind != "observation" for m in ms)]
        came = measures.attendance(run, place, datetime.fromisoformat(start), datetime.fromisoformat(end),
                                   invited_fact=fact)
        net = measures.network(run)
        metrics = json.loads((out / "metrics.json").read_text())
    return {"scenario": name, "fact": fact, "knew_start": len(knew["by_hour"][0]["agents"]),
            "knew_end": len(knew["evidence"]), "knew_not_only_by_sight": len(told), "planned": _n(came["planned"]),
            "present": _n(came["present"]), "planned_and_came": _n(came["planned_and_came"]),
            "came_and_knew": came["attended_and_knew"],
            "density_start": net["density_start"], "density_end": net["density_end"],
            "model_calls": metrics["model_calls"], "wall_s": metrics["wall_s"]}


def table(rows: list[dict[str, Any]]) -> str:
    """The figures as the README's markdown table."""
    lines = ["| scenario | fact | knew, start → end (not only by sight) | an appointment there in a day plan "
             "| at the place in its window | of them: had planned, knew beforehand | density, start → end "
             "| model calls | wall |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['scenario']} | {r['fact']} | {r['knew_start']} → {r['knew_end']} ({r['knew_not_only_by_sight']})"
              f" | {r['planned']} | {r['present']} | {r['planned_and_came']}, {r['came_and_knew']} | "
              f"{r['density_start']:.3f} → {r['density_end']:.3f} | {r['model_calls']:,} | {r['wall_s']:.0f} s |"
              for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="a folder for the runs and scenario files (a run "
                        "already finished there is measured again, not run again)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = []
    for name, scenario in scenarios(args.out / "scenarios").items():
        run = args.out / name
        if not (run / "metrics.json").is_file():
            scenario_run(load_scenario(str(scenario)), run, embedder=args.embedder, seed=args.seed)
        rows.append(measure(run, name))
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


def _n(value: int | list) -> int:
    return value if isinstance(value, int) else len(value)


if __name__ == "__main__":
    main()

"""Seeded, deterministic residents, and room for them: a run can have any number of agents.

``populate`` keeps the town's own residents and adds generated ones; when they would
crowd the town's houses and workplaces (more than ``PER_HOME`` to a home, ``PER_JOB``
to a workplace), it builds new streets of houses and workplaces beside the town, so a
large run has the density of a small one.
"""

from __future__ import annotations

import random

from memstream.sim.world import Area, Building, Resident, Room, Thing, Town

FIRST = """Ada Ben Cleo Dev Elena Farid Gina Hugo Iris Jonas Kira Leo Mina Nico Olga Pavel Quinn Rosa Sami Tara Umar
Vera Wen Xavi Yara Zane Aiko Bruno Chiara Dario Esme Felix Greta Hana Ivo Jade Kofi Lina Marco Noor Omar Pia Raul Sofia
Teo Uma Viktor Wanda Yusuf Zoe Amara Bodhi Celia Diego Elif Femi Gus Holly Ines Jamal""".split()
LAST = """Abe Baker Costa Dahl Evans Fox Garcia Horvat Ito Jensen Kim Larsen Meyer Novak Okafor Petrov Quispe Reyes
Sato Tanaka Ueda Varga Weber Xu Young Zhou Alvarez Berg Chowdhury Diaz Eriksen Fischer Gupta Haas Ibrahim Jovanovic
Kowalski Lund Moreau Nakamura Olsen Park Rossi Silva Torres Urban Vogel Wolff Yilmaz Zeller""".split()
TRAITS = ["kind", "curious", "shy", "outgoing", "patient", "ambitious", "funny", "calm", "stubborn", "creative",
          "practical", "warm", "analytical", "energetic", "thoughtful", "organised"]
WAKE = ["06:00", "06:30", "07:00", "07:30", "08:00"]
SLEEP = ["21:30", "22:00", "22:30", "23:00", "23:30"]
#: (occupation, kind of workplace, what its object is used for)
TRADES = [("baker", "bakery", "bake"), ("barista", "coffee shop", "coffee"), ("clerk", "office", "file"),
          ("teacher", "school", "teach"), ("mechanic", "garage", "repair"), ("librarian", "library", "read"),
          ("grocer", "grocery", "shop"), ("tailor", "tailor's shop", "sew")]
PER_HOME, PER_JOB = 4, 12


def _house(name: str, x: float, y: float) -> Building:
    return Building(name=name, x=x, y=y, rooms=[
        Room(name="kitchen", objects=[Thing(name="stove", uses=["cook", "breakfast", "dinner", "lunch"],
                                            active="on", idle="off")]),
        Room(name="bedroom", objects=[Thing(name="bed", uses=["sleep", "go to bed"], active="occupied",
                                            idle="made")])])


def populate(town: Town, n: int, seed: int = 0) -> Town:
    """``town`` with ``n`` residents: its own first, then generated ones (and new streets if needed)."""
    if n <= len(town.residents):
        return town.model_copy(update={"residents": town.residents[:n]})
    rng = random.Random(seed)
    extra = n - len(town.residents)
    homes = sorted(b.name for a in town.areas for b in a.buildings if any(r.name == "bedroom" for r in b.rooms))
    jobs = sorted({(r.occupation, r.workplace) for r in town.residents if r.occupation and r.workplace})
    areas = list(town.areas)
    paths = list(town.paths)
    anchor = homes[0] if homes else town.areas[0].buildings[0].name
    new_homes = max(0, -(-(n - PER_HOME * len(homes)) // PER_HOME))
    if new_homes:
        houses = [_house(f"Maple Street house {i + 1}", -10 - 2 * (i % 16), 2 * (i // 16)) for i in range(new_homes)]
        areas.append(Area(name="Maple Street", buildings=houses))
        paths += _grid_paths([h.name for h in houses], 16) + [(houses[0].name, anchor)]
        homes += [h.name for h in houses]
    new_jobs = max(0, -(-(n - PER_JOB * len(jobs)) // PER_JOB))
    if new_jobs:
        shops = []
        for i in range(new_jobs):
            occupation, kind, use = TRADES[i % len(TRADES)]
            shops.append((occupation, Building(name=f"Commerce Row {kind} {i + 1}", x=30 + 2 * (i % 16),
                                               y=2 * (i // 16), rooms=[Room(name="shop floor", objects=[
                                                   Thing(name="counter", uses=[use, occupation], active="busy")])])))
        areas.append(Area(name="Commerce Row", buildings=[b for _, b in shops]))
        paths += _grid_paths([b.name for _, b in shops], 16) + [(shops[0][1].name, anchor)]
        jobs += [(occupation, b.name) for occupation, b in shops]
    grown = town.model_copy(update={"areas": areas, "paths": paths})
    residents = list(town.residents) + generate_residents(grown, extra, seed, homes=homes, jobs=jobs, rng=rng)
    return Town.model_validate({**grown.model_dump(), "residents": [r.model_dump() for r in residents]})


def _grid_paths(names: list[str], width: int) -> list[tuple[str, str]]:
    out = []
    for i, name in enumerate(names):
        if i % width:
            out.append((names[i - 1], name))
        if i >= width:
            out.append((names[i - width], name))
    return out


def _more_names(n: int, taken: set[str], rng: random.Random) -> list[str]:
    """``n`` more distinct names once the plain ones are used up: double-barrelled surnames (147,000 of
    them), then numbered ones, so no count of residents runs out of names."""
    doubled = [f"{first} {a}-{b}" for first in FIRST for a in LAST for b in LAST if a != b]
    rng.shuffle(doubled)
    out = [name for name in doubled[:n] if name not in taken]
    number = 2
    while len(out) < n:
        out += [f"{name} {number}" for name in doubled[: n - len(out)] if f"{name} {number}" not in taken]
        number += 1
    return out


def generate_residents(town: Town, n: int, seed: int = 0, *, homes: list[str] | None = None,
                       jobs: list[tuple[str, str]] | None = None, rng: random.Random | None = None) -> list[Resident]:
    """``n`` residents with distinct names, living in ``homes`` and working at ``jobs``, deterministically.

    Homes default to the town's buildings with a bedroom, jobs to its residents'
    (occupation, workplace) pairs; homes and jobs are dealt out evenly.
    """
    rng = rng or random.Random(seed)
    taken = {r.name for r in town.residents}
    homes = homes or sorted(b.name for a in town.areas for b in a.buildings
                            if any(r.name == "bedroom" for r in b.rooms)) or [town.areas[0].buildings[0].name]
    jobs = jobs or sorted({(r.occupation, r.workplace) for r in town.residents if r.occupation and r.workplace}) \
        or [("", "")]
    names = [f"{first} {last}" for first in FIRST for last in LAST if f"{first} {last}" not in taken]
    rng.shuffle(names)
    if n > len(names):
        names += _more_names(n - len(names), taken | set(names), random.Random(f"more names {seed}"))
    out = []
    for i, name in enumerate(names[:n]):
        occupation, workplace = jobs[i % len(jobs)]
        out.append(Resident(name=name, age=rng.randint(18, 80), traits=rng.sample(TRAITS, 3),
                            occupation=occupation, workplace=workplace, home=homes[i % len(homes)],
                            wake=rng.choice(WAKE), sleep=rng.choice(SLEEP),
                            lifestyle=f"a {occupation or 'resident'} of {town.name}",
                            situation="going about an ordinary week"))
    return out

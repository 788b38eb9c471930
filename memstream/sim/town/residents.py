"""Seeded, deterministic residents, and room for them: a run can have any number of agents.

``populate`` keeps the town's own residents and adds generated ones. They fill the town's
spare room first (up to ``PER_HOME`` to a home, ``PER_JOB`` to a workplace); the rest live
in new wards beside the town, ``WARD`` residents each, with their houses and workplaces
side by side and the wards on a square grid. So a large run has the density and the
commutes of a small one: everyone lives a few minutes' walk from work, and what an agent
sees and whom it meets does not grow with the town (one long street of houses and one
of shops had 10,000 agents walking for hours, and their routes spanned the whole town).
"""

from __future__ import annotations

import math
import random

from memstream.sim.town.world import Area, Building, Resident, Room, Thing, Town

FIRST = """Ada Ben Cleo Dev Elena Farid Gina Hugo Iris Jonas Kira Leo Mina Nico Olga Pavel Quinn Rosa Sami Tara Umar
Vera Wen Xavi Yara Zane Aiko Bruno Chiara Dario Esme Felix Greta Hana Ivo Jade Kofi Lina Marco Noor Omar Pia Raul Sofia
Teo Uma Viktor Wanda Yusuf Zoe Amara Bodhi Celia Diego Elif Femi Gus Holly Ines Jamal Kai Luca Maya Nadia Oscar
Priya Rafael Selin Tomas Ulla Valeria Wiktor Ximena Yuki Zara Anya Bilal Carmen Duc Emre Fatima Goran Helga Ilya Jun
Kemal Leila Malik Nina Otto Paula Rohan Sana Tobias Ursula Vikram Willa Yosef Zainab Alma Boris Chen Dalia Eero Flora
Gideon Hiro Idris Johanna Kiran Lorenzo Mirela Nils Odette Petra Reza Signe""".split()
LAST = """Abe Baker Costa Dahl Evans Fox Garcia Horvat Ito Jensen Kim Larsen Meyer Novak Okafor Petrov Quispe Reyes
Sato Tanaka Ueda Varga Weber Xu Young Zhou Alvarez Berg Chowdhury Diaz Eriksen Fischer Gupta Haas Ibrahim Jovanovic
Kowalski Lund Moreau Nakamura Olsen Park Rossi Silva Torres Urban Vogel Wolff Yilmaz Zeller Acosta Brandt Castro
Dubois Engel Ferreira Grant Hughes Ivanova Jaeger Keller Lopez Mendes Nguyen Ortiz Patel Quarshie Richter Santos Tran
Ulrich Vasquez Walsh Yamada Zimmer Adler Bauer Carter Dominguez Ellis Fuchs Gallo Hale Iqbal Jonsson Kaur Lindqvist
Mora Nolan Ozturk Pereira Romero Schmidt Thorne Ueno Vidal Wong Yates Zapata Arslan Bishop Cruz""".split()
TRAITS = ["kind", "curious", "shy", "outgoing", "patient", "ambitious", "funny", "calm", "stubborn", "creative",
          "practical", "warm", "analytical", "energetic", "thoughtful", "organised"]
WAKE = ["06:00", "06:30", "07:00", "07:30", "08:00"]
SLEEP = ["21:30", "22:00", "22:30", "23:00", "23:30"]
#: (occupation, kind of workplace, what its object is used for)
TRADES = [("baker", "bakery", "bake"), ("barista", "coffee shop", "coffee"), ("clerk", "office", "file"),
          ("teacher", "school", "teach"), ("mechanic", "garage", "repair"), ("librarian", "library", "read"),
          ("grocer", "grocery", "shop"), ("tailor", "tailor's shop", "sew")]
PER_HOME, PER_JOB = 4, 12
#: Residents of one generated ward: 12 houses and 4 workplaces.
WARD = 48
#: Distance units between neighbouring buildings of a ward, and between wards' corners.
SPACING, WARD_SPACING = 2.0, 12.0


def _house(name: str, x: float, y: float) -> Building:
    return Building(name=name, x=x, y=y, rooms=[
        Room(name="kitchen", objects=[Thing(name="stove", uses=["cook", "breakfast", "dinner", "lunch"],
                                            active="on", idle="off")]),
        Room(name="bedroom", objects=[Thing(name="bed", uses=["sleep", "go to bed"], active="occupied",
                                            idle="made")])])


def populate(town: Town, n: int, seed: int = 0) -> Town:
    """``town`` with ``n`` residents: its own first, then generated ones (and new wards if needed)."""
    if n <= len(town.residents):
        return town.model_copy(update={"residents": town.residents[:n]})
    rng = random.Random(seed)
    extra = n - len(town.residents)
    homes = sorted(b.name for a in town.areas for b in a.buildings if any(r.name == "bedroom" for r in b.rooms))
    jobs = sorted({(r.occupation, r.workplace) for r in town.residents if r.occupation and r.workplace})
    capacity = PER_HOME * len(homes)  # beds, and jobs if the town has any
    if jobs:
        capacity = min(capacity, PER_JOB * len(jobs))
    room = capacity - len(town.residents)
    local = max(0, min(extra, room))
    places = [(homes[i % len(homes)], jobs[i % len(jobs)] if jobs else ("", "")) for i in range(local)]
    anchor = homes[0] if homes else town.areas[0].buildings[0].name
    wards = [_ward(i) for i in range(-(-(extra - local) // WARD))]
    for i in range(extra - local):
        _, _, ward_homes, ward_jobs = wards[i // WARD]
        places.append((ward_homes[i % len(ward_homes)], ward_jobs[i % len(ward_jobs)]))
    paths = list(town.paths) + [p for w in wards for p in w[1]] + _ward_links([w[0] for w in wards], anchor)
    grown = town.model_copy(update={"areas": list(town.areas) + [w[0] for w in wards], "paths": paths})
    residents = list(town.residents) + generate_residents(grown, extra, seed, places=places, rng=rng)
    return Town.model_validate({**grown.model_dump(), "residents": [r.model_dump() for r in residents]})


def _ward(index: int) -> tuple[Area, list[tuple[str, str]], list[str], list[tuple[str, str]]]:
    """Ward ``index``: its area (houses in a 4 x 3 grid, a row of workplaces beside them), its paths,
    its homes and its (occupation, workplace) pairs, at its cell of the wards' grid west of the town."""
    name = f"Ward {index + 1}"
    col, row = _ward_cell(index)
    x0, y0 = -10 - WARD_SPACING * col, WARD_SPACING * row
    houses = [_house(f"{name} house {i + 1}", x0 - SPACING * (i % 4), y0 + SPACING * (i // 4))
              for i in range(WARD // PER_HOME)]
    shops, jobs = [], []
    for j in range(WARD // PER_JOB):
        occupation, kind, use = TRADES[(index * (WARD // PER_JOB) + j) % len(TRADES)]
        shops.append(Building(name=f"{name} {kind} {j + 1}", x=x0 - SPACING * j, y=y0 + SPACING * 3, rooms=[
            Room(name="shop floor", objects=[Thing(name="counter", uses=[use, occupation], active="busy")])]))
        jobs.append((occupation, shops[-1].name))
    grid = [b.name for b in houses + shops]  # the workplaces are the grid's fourth row
    return Area(name=name, buildings=houses + shops), _grid_paths(grid, 4), [h.name for h in houses], jobs


def _ward_cell(index: int) -> tuple[int, int]:
    """The (column, row) of ward ``index``, filling squares shell by shell: the first k * k wards
    always make a k x k square, whatever the number of wards, so a ward keeps its place."""
    shell = math.isqrt(index)
    offset = index - shell * shell
    return (shell, offset) if offset <= shell else (offset - shell - 1, shell)


def _ward_links(areas: list[Area], anchor: str) -> list[tuple[str, str]]:
    """Roads between neighbouring wards' first houses, and from the first ward to the town."""
    corner = {_ward_cell(i): a.buildings[0].name for i, a in enumerate(areas)}
    links = [(corner[(0, 0)], anchor)] if areas else []
    for (col, row), here in corner.items():
        links += [(corner[c], here) for c in ((col - 1, row), (col, row - 1)) if c in corner]
    return links


def _grid_paths(names: list[str], width: int) -> list[tuple[str, str]]:
    """Roads between grid neighbours of ``names`` laid out ``width`` to a row."""
    out = []
    for i, name in enumerate(names):
        if i % width:
            out.append((names[i - 1], name))
        if i >= width:
            out.append((names[i - width], name))
    return out


def _more_names(n: int, taken: set[str], rng: random.Random) -> list[str]:
    """``n`` more distinct names once the plain ones (about 12,000) are used up: double-barrelled surnames
    (over a million), then numbered ones, so no count of residents runs out of names."""
    doubled = [f"{first} {a}-{b}" for first in FIRST for a in LAST for b in LAST if a != b]
    rng.shuffle(doubled)
    out = [name for name in doubled[:n] if name not in taken]
    number = 2
    while len(out) < n:
        out += [f"{name} {number}" for name in doubled[: n - len(out)] if f"{name} {number}" not in taken]
        number += 1
    return out


def generate_residents(town: Town, n: int, seed: int = 0, *, places: list[tuple[str, tuple[str, str]]],
                       rng: random.Random | None = None) -> list[Resident]:
    """``n`` residents with distinct names, deterministically; resident i lives and works at
    ``places[i]`` (home, (occupation, workplace))."""
    rng = rng or random.Random(seed)
    taken = {r.name for r in town.residents}
    names = [f"{first} {last}" for first in FIRST for last in LAST if f"{first} {last}" not in taken]
    rng.shuffle(names)
    if n > len(names):
        names += _more_names(n - len(names), taken | set(names), random.Random(f"more names {seed}"))
    out = []
    for name, (home, (occupation, workplace)) in zip(names[:n], places, strict=True):
        out.append(Resident(name=name, age=rng.randint(18, 80), traits=rng.sample(TRAITS, 3),
                            occupation=occupation, workplace=workplace, home=home,
                            wake=rng.choice(WAKE), sleep=rng.choice(SLEEP),
                            lifestyle=f"a {occupation or 'resident'} of {town.name}",
                            situation="going about an ordinary week"))
    return out

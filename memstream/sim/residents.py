"""Seeded, deterministic residents for a town of any size (a run can have 1,000 agents)."""

from __future__ import annotations

import random

from memstream.sim.world import Resident, Town

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


def generate_residents(town: Town, n: int, seed: int = 0) -> list[Resident]:
    """``n`` residents with distinct names, homes in the town's houses and jobs at its workplaces.

    The same town, ``n`` and ``seed`` always give the same residents. Jobs are drawn
    from the town's own residents' (occupation, workplace) pairs.
    """
    rng = random.Random(seed)
    homes = sorted(b.name for a in town.areas for b in a.buildings if any(r.name == "bedroom" for r in b.rooms))
    if not homes:
        homes = sorted(b.name for a in town.areas for b in a.buildings)
    jobs = sorted({(r.occupation, r.workplace) for r in town.residents if r.occupation and r.workplace}) or [("", "")]
    names = [f"{first} {last}" for first in FIRST for last in LAST]
    if n > len(names):
        raise ValueError(f"at most {len(names)} generated residents")
    rng.shuffle(names)
    out = []
    for name in names[:n]:
        occupation, workplace = rng.choice(jobs)
        wake, sleep = rng.choice(WAKE), rng.choice(SLEEP)
        out.append(Resident(name=name, age=rng.randint(18, 80), traits=rng.sample(TRAITS, 3),
                            occupation=occupation, workplace=workplace, home=rng.choice(homes), wake=wake,
                            sleep=sleep, lifestyle=f"a {occupation or 'resident'} of {town.name}",
                            situation="going about an ordinary week"))
    return out

"""The town: nested places and paths (``world``), seeded residents to fill it (``residents``), and what can be
seen where (``scene``). It knows nothing of agents' minds: the rooms above build on it."""

from memstream.sim.town.residents import populate
from memstream.sim.town.scene import Scene
from memstream.sim.town.world import Map, Resident, Town, default_town_path, load_town

__all__ = ["Map", "Resident", "Scene", "Town", "default_town_path", "load_town", "populate"]

"""The town: nested places and paths (``world``), seeded residents to fill it (``residents``), and what can be
seen where (``scene``). It knows nothing of agents' minds: the rooms above build on it."""

from memstream.sim.town.world import Map, Town

__all__ = ["Map", "Town"]

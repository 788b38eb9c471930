"""The town a run is made of: the town file's residents, or as many as asked, if they fit in memory."""

from __future__ import annotations

import os

from memstream.errors import MemstreamError
from memstream.sim.run.config import RunConfig
from memstream.sim.town.residents import populate
from memstream.sim.town.world import Town, default_town_path, load_town

#: Peak resident memory per agent over the first simulated hour, and for the process itself
#: (``benchmarks/simulation.py``: 10,000 agents peaked near 1 GB); a run grows from there.
MB_PER_AGENT, MB_BASE = 0.1, 300


def resolve_town(config: RunConfig) -> Town:
    """The town of a new run, with its resolved residents; refused before it is built if it cannot fit."""
    town = check_town(config)
    return populate(town, config.agents or len(town.residents), config.seed)


def check_town(config: RunConfig) -> Town:
    """The town file of ``config`` read and checked (it has residents or ``agents`` makes them, and they fit
    in memory), its residents not yet built: what a sweep checks of every run before any worker starts."""
    town = load_town(config.town or default_town_path())
    if not town.residents and not config.agents:
        raise MemstreamError(f"the town {config.town} has no residents; add some to it, or give --agents N "
                             "to generate N")
    check_memory(config.agents or len(town.residents))
    return town


def check_memory(agents: int) -> None:
    """Refuse a town that cannot fit in this machine's memory, before building it."""
    try:
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows): let the run find out
        return
    need_mb = MB_BASE + agents * MB_PER_AGENT
    if need_mb > total_mb:
        raise MemstreamError(f"--agents {agents:,} needs about {need_mb / 1024:,.0f} GB of memory for a simulated "
                             f"hour and this machine has {total_mb / 1024:,.0f} GB; give fewer agents "
                             f"(up to about {int((total_mb - MB_BASE) / MB_PER_AGENT):,})")

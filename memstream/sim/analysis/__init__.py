"""What a run shows, read model-free from its files: the paper's measures (``measures``: diffusion,
relationships, attendance, interviews) and where each memory came from (``provenance``)."""

from memstream.sim.analysis import measures
from memstream.sim.analysis.provenance import downstream, provenance, source_of

__all__ = ["downstream", "measures", "provenance", "source_of"]

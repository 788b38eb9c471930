"""What a run shows, read model-free from its files: the paper's measures (``measures``: diffusion,
relationships, attendance, interviews; what each returns in ``results``) and where each memory came from
(``provenance``)."""

from memstream.sim.analysis import measures
from memstream.sim.analysis.provenance import downstream, provenance, source_of
from memstream.sim.analysis.results import Attendance, Diffusion, InterviewAnswer, Network

__all__ = ["Attendance", "Diffusion", "InterviewAnswer", "Network", "downstream", "measures", "provenance",
           "source_of"]

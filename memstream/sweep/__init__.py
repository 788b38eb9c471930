"""Many runs as one study: ``memstream sweep SPEC --out DIR``, each run a Ray task (:mod:`memstream.sweep.study`)."""

from memstream.sweep.results import Cell, SweepSummary
from memstream.sweep.spec import DEFAULT_MAX_RUNS, SweepSpec, load_spec
from memstream.sweep.study import run_sweep

__all__ = ["DEFAULT_MAX_RUNS", "Cell", "SweepSpec", "SweepSummary", "load_spec", "run_sweep"]

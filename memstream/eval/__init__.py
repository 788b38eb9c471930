"""memstream eval: retrieval measured on public long-term-memory benchmarks, every retriever side by side."""

from memstream.eval.datasets import Dataset, load_locomo, load_longmemeval
from memstream.eval.harness import RETRIEVERS, EvalWeights, evaluate
from memstream.eval.report import table

__all__ = ["EvalWeights", "table", "RETRIEVERS", "Dataset", "evaluate", "load_locomo", "load_longmemeval"]

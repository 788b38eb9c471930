"""memstream eval: retrieval measured on public long-term-memory benchmarks, every retriever side by side."""

from memstream.eval.datasets import Dataset, load_locomo, load_longmemeval
from memstream.eval.harness import RETRIEVERS, evaluate

__all__ = ["RETRIEVERS", "Dataset", "evaluate", "load_locomo", "load_longmemeval"]

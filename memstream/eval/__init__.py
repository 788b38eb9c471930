"""memstream eval: retrieval measured on public long-term-memory benchmarks, every retriever side by side;
and answers measured from every memory design's context, against what the context costs."""

from memstream.eval import offline as _offline_rules  # noqa: F401 - registers the answerer's and judge's rules
from memstream.eval.answers import WINDOW, Models, evaluate_designs
from memstream.eval.datasets import Dataset, load_locomo, load_longmemeval, sliced
from memstream.eval.harness import RETRIEVERS, EvalWeights, evaluate
from memstream.eval.report import designs_table, table

__all__ = ["RETRIEVERS", "WINDOW", "Dataset", "EvalWeights", "Models", "designs_table", "evaluate",
           "evaluate_designs", "load_locomo", "load_longmemeval", "sliced", "table"]

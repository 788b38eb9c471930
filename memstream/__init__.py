"""memstream: a lab for the long-term memory of LLM agents.

The centre is the memory stream of Generative Agents (Park et al. 2023):
``memstream.stream`` (memories and scored retrieval), then ``reflection``,
``planning`` and ``sim`` along the data path.
"""

from memstream.errors import MemstreamError
from memstream.models import make_chat_model, make_embedder
from memstream.stream import Memory, MemoryStream, Recall, Weights

__version__ = "0.1.0"
__all__ = [
    "Memory", "MemoryStream", "MemstreamError", "Recall", "Weights", "__version__", "make_chat_model", "make_embedder",
]

"""Reflection: cited insights written back into the stream when enough has happened."""

from memstream.reflection.reflect import (
    THRESHOLD,
    DroppedInsight,
    ReflectionResult,
    WrittenInsight,
    accumulated_importance,
    maybe_reflect,
    reflect,
)
from memstream.reflection.tree import CitationNode, citation_tree

__all__ = ["THRESHOLD", "CitationNode", "DroppedInsight", "ReflectionResult", "WrittenInsight",
           "accumulated_importance", "citation_tree", "maybe_reflect", "reflect"]

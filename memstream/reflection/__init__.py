"""Reflection: cited insights written back into the stream when enough has happened."""

from memstream.reflection import offline as _offline_rules  # noqa: F401 - registers the reflection rules
from memstream.reflection.reflect import (
    THRESHOLD,
    DroppedInsight,
    ReflectionResult,
    WrittenInsight,
    accumulated_importance,
    maybe_reflect,
    maybe_reflect_stage,
    reflect,
    reflect_stage,
)
from memstream.reflection.tree import CitationNode, citation_tree

__all__ = [
    "THRESHOLD", "CitationNode", "DroppedInsight", "ReflectionResult", "WrittenInsight", "accumulated_importance",
    "citation_tree", "maybe_reflect", "maybe_reflect_stage", "reflect", "reflect_stage",
]

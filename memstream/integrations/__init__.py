"""memstream's designs inside agent frameworks: :class:`MemstreamStore`, any design bound to a store as a
LangGraph agent's ``BaseStore`` (``memstream[langgraph]``).

Imported when first used, so ``import memstream.integrations`` needs no framework; a missing one is one line
naming the extra (:func:`memstream.errors.import_extra`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstream.errors import import_extra

if TYPE_CHECKING:
    from memstream.integrations.langgraph import MemstreamStore


def __getattr__(name: str) -> Any:
    if name == "MemstreamStore":
        import_extra("langgraph.store.base", feature="memstream.integrations.MemstreamStore", extra="langgraph")
        from memstream.integrations.langgraph import MemstreamStore

        return MemstreamStore
    raise AttributeError(f"module 'memstream.integrations' has no attribute {name!r}")


__all__ = ["MemstreamStore"]

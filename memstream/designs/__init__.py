"""Memory designs side by side: one interface (write, context, consolidate, state), six designs.

``full`` (everything, cut from the oldest), ``buffer-summary`` (recent turns and a recursive
summary), ``vector`` (relevance over every record), ``stream`` (the Generative Agents stream and
its reflection), ``tiered`` (pinned, summary, window and retrieved under per-tier budgets) and
``profile`` (one structured file per owner and scope, read whole, edited after each turn, every version kept),
``facts`` (versioned facts extracted as they are said, over ``memstream.facts``), and ``recent`` (the floor: only
the last few records, whatever is asked).
Every model call a design makes is a request stage; its offline rules are in ``offline.py``.
"""

from memstream.designs import offline as _offline_rules  # noqa: F401 - registers the summary rule
from memstream.designs.base import COMPACTIONS, DROPPED_EDITS, DesignConfig, MemoryDesign, OwnerRows, refused_change
from memstream.designs.buffer import BufferConfig, BufferSummary
from memstream.designs.context import Block, Context, Line
from memstream.designs.entries import Entry, Record, entry, record_text
from memstream.designs.full import FullConfig, FullContext
from memstream.designs.generative_agents import StreamConfig, StreamDesign
from memstream.designs.letta import LettaConfig, LettaDesign, MemoryBlock
from memstream.designs.persist import load_state, save_state
from memstream.designs.profile import ProfileConfig, ProfileDesign, ProfileStore, blame
from memstream.designs.recent import RecentConfig, RecentDesign
from memstream.designs.registry import DESIGNS, RETRIEVAL_DESIGNS, design_names, make_design
from memstream.designs.retrievers import (
    NEEDS_IMPORTANCE,
    RETRIEVAL_WEIGHTS,
    RETRIEVERS,
    Signals,
    bm25_index,
    bm25_scores,
    check_retriever,
    score,
    tokenize,
)
from memstream.designs.store import (
    BoundDesign,
    DesignStore,
    ImportedState,
    NoSuchRecord,
    check_store,
    import_state,
    kept_designs,
    open_design,
    plain_scope,
    refuse_non_store,
    state_design,
    storable,
)
from memstream.designs.tiered import TieredConfig, TieredDesign
from memstream.designs.vector import VectorDesign
from memstream.designs.versioned_facts import FactsConfig, FactsDesign, entry_key

__all__ = [
    "COMPACTIONS", "DESIGNS", "DROPPED_EDITS", "NEEDS_IMPORTANCE", "RETRIEVAL_DESIGNS", "RETRIEVAL_WEIGHTS",
    "RETRIEVERS", "Block", "BoundDesign", "BufferConfig", "BufferSummary", "Context", "DesignConfig", "DesignStore",
    "Entry", "FactsConfig", "FactsDesign", "FullConfig", "FullContext", "LettaConfig", "LettaDesign", "Line",
    "MemoryBlock", "MemoryDesign", "OwnerRows", "ProfileConfig", "ProfileDesign", "ProfileStore", "Record", "Signals",
    "RecentConfig", "RecentDesign",
    "StreamConfig", "StreamDesign", "TieredConfig", "TieredDesign", "VectorDesign", "blame", "bm25_index",
    "bm25_scores", "check_retriever", "design_names", "entry", "entry_key", "load_state", "make_design",
    "open_design", "record_text", "refused_change", "save_state", "score", "storable", "tokenize",
    "ImportedState", "NoSuchRecord", "check_store", "import_state", "kept_designs", "plain_scope", "refuse_non_store",
    "state_design",  # the design store's lifecycle
]

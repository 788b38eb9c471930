"""Versioned facts: atomic, owner-scoped facts that change, expire and can be deleted for real.

A store beside the stream (SQLite, FTS5 and vectors, one transaction per write, several processes,
crash-safe): records with lifecycle fields, ``UPDATES``/``EXTENDS`` edges, provenance to sources,
forgetting as explicit writes plus read filters, hard delete that follows provenance, and a read
path that filters before it ranks. The write path's model stages and the ``facts`` design are in
``memstream.designs``.
"""

from memstream.facts.check import check_facts_file
from memstream.facts.erase import Erased, erase_facts, erase_owner, erase_source, purge_file
from memstream.facts.lifecycle import Decay, View, forget, restore, sweep, touch, visible
from memstream.facts.profile import profile
from memstream.facts.read import RRF_K, ReadPolicy, recall, versions
from memstream.facts.records import Action, Applied, Change, Fact, Hit, NewFact, Source
from memstream.facts.schema import EXTENDS, UPDATES
from memstream.facts.store import FactStore
from memstream.facts.write import apply, latest

__all__ = [
    "Action", "Applied", "Change", "Decay", "EXTENDS", "Erased", "Fact", "FactStore", "Hit", "NewFact", "RRF_K",
    "ReadPolicy", "Source", "UPDATES", "View", "apply", "check_facts_file", "erase_facts", "erase_owner",
    "erase_source", "forget", "latest", "profile", "purge_file", "recall", "restore", "sweep", "touch", "versions",
    "visible",
]

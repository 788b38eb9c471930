"""The ``profile`` design: one structured file per owner and scope, edited by a model, every version kept.

Its parts, one idea each: the file and its edits (``text``), compaction's rules (``compact``), the
versions and the update lock (``store``), a line's life across versions (``blame``), the update of one
turn (``update``) and the design itself (``design``); its prompts, parsers and offline rules.
"""

from memstream.designs.profile import offline as _offline_rules  # noqa: F401 - registers the profile's rules
from memstream.designs.profile.blame import blame
from memstream.designs.profile.config import ProfileConfig
from memstream.designs.profile.design import ProfileDesign
from memstream.designs.profile.store import ProfileStore, Version

__all__ = ["ProfileConfig", "ProfileDesign", "ProfileStore", "Version", "blame"]

"""memstream.planning: filled by a later issue (see README, Roadmap)."""

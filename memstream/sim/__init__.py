"""memstream.sim: filled by a later issue (see README, Roadmap)."""

"""memstream.reflection: filled by a later issue (see README, Roadmap)."""

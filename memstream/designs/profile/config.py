"""The profile design's settings (kept in its state file, like every design's)."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from memstream.designs.base import DesignConfig
from memstream.designs.profile.text import CAP_CHARS, COMPACT_AT, COMPACT_TO, DEFAULT_SECTIONS, check_sections

#: Times an updater is asked again after an edit was rejected (its anchor matched 0 or 2+ times ...).
RETRIES = 3


class ProfileConfig(DesignConfig):
    """The ``profile`` design's settings: its file, scope, the file's sections and its size cap."""

    path: str = Field(default="", description="SQLite file of every version ('' = kept in memory, in the state)")
    scope: str = Field(default="default", min_length=1, max_length=200, description="the workspace a file is for")
    sections: tuple[str, ...] = Field(default=DEFAULT_SECTIONS, description="the file's fixed skeleton")
    cap_chars: int = Field(default=CAP_CHARS, gt=0, description="a longer file is refused")
    compact_at: int = Field(default=COMPACT_AT, gt=0, description="compaction starts past this length")
    compact_to: int = Field(default=COMPACT_TO, gt=0, description="compaction's target")
    compact: bool = Field(default=True, description="compact past compact_at (off: only the cap refuses)")
    retries: int = Field(default=RETRIES, ge=0, le=10, description="updater re-asks after a rejected edit")
    turn_entries: int = Field(default=2, gt=0, description="entries per update: a message and its reply")
    gate: bool = Field(default=True, description="the safety check on every new text (memstream.trust)")

    @field_validator("sections")
    @classmethod
    def _sections(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_sections(value)

    @model_validator(mode="after")
    def _sizes(self) -> ProfileConfig:
        if not self.compact_to < self.compact_at <= self.cap_chars:
            raise ValueError(f"need compact_to < compact_at <= cap_chars, got {self.compact_to}, "
                             f"{self.compact_at}, {self.cap_chars}")
        return self

"""The errors memstream raises for a user's mistake.

Anything derived from :class:`MemstreamError` is the user's to fix (a bad file,
an unknown owner, a naive time ...). The CLI prints its message as one line and
exits with code 2; library callers catch it like any exception.
"""


class MemstreamError(Exception):
    """A problem with the input that the user can fix; the message says how."""


class StructuredOutputError(MemstreamError):
    """A model answer that does not parse into the expected structure."""


class ReplayMissError(MemstreamError):
    """A call not in a replay-only cache: a setup problem, never papered over by a fallback."""

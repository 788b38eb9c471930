"""Text as the commands show it: shortened to a width, and safe to print on a terminal."""

from __future__ import annotations

from typing import Any, TextIO


def short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


#: Characters a terminal would act on rather than show (escape sequences, bidi overrides ...),
#: shown as escapes instead: a memory's text cannot recolour, move or rewrite the screen.
_HIDDEN = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), *range(0x0b, 0x20), 0x7f, *range(0x80, 0xa0)]}
_HIDDEN.update({c: f"\\u{c:04x}" for c in [*range(0x202a, 0x202f), *range(0x2066, 0x206a), 0x200b, 0x200e, 0x200f]})


def printable(text: str) -> str:
    shown = text.translate(_HIDDEN)
    try:
        shown.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (from bytes that were not UTF-8): shown as an escape
        shown = shown.encode("utf-8", "backslashreplace").decode("utf-8")
    return shown


class Printable:
    """A text stream that shows control characters as escapes (newlines and tabs pass)."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        return self.inner.write(printable(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

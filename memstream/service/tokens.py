"""Who may use which owners: bearer tokens read from a file, each allowed a set of owners or all of them.

The file has one token a line, then the owners it may use, comma-separated, or ``*`` for all (an admin)::

    # token                              owners
    3f9a1c0e7b2d4a6f8e1c3b5d7f9a2c4e     ana,ben
    a8d7e6f5c4b3a2918f7e6d5c4b3a2910     *

A token is compared with every known token in constant time (:func:`hmac.compare_digest` over their
SHA-256 digests, all of them every time), so neither its length nor how much of it matched shows in how
long an answer takes; the service names a token by its line in the file, never by itself.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from pathlib import Path

from memstream.errors import MemstreamError
from memstream.service.errors import Unauthorized
from memstream.stream import normalise_owner

#: A token shorter than this is refused when the file is read (a guessable token is no access control).
MIN_TOKEN_CHARS = 16
#: What a tokens-file line gives instead of owners to allow every owner.
ALL_OWNERS = "*"


@dataclass(frozen=True)
class Principal:
    """Who is asking: a name for messages and logs (never the token) and the owners it may use (None: all)."""

    name: str
    owners: frozenset[str] | None

    def may(self, owner: str) -> bool:
        return self.owners is None or owner in self.owners


#: The one principal of a server started without tokens (bound to loopback, so only this machine asks).
LOCAL = Principal("local (no tokens)", None)


@dataclass(frozen=True)
class _Known:
    digest: bytes
    principal: Principal


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class Tokens:
    """The tokens a server accepts (:meth:`read` a file), each a :class:`Principal`."""

    def __init__(self, known: list[_Known]) -> None:
        self._known = known

    @classmethod
    def read(cls, path: str | Path) -> Tokens:
        """The tokens in ``path`` (the module's docstring shows the format); one line naming the first problem."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise MemstreamError(f"cannot read the tokens file {path} ({type(e).__name__}: {e})") from None
        return cls.parse(text, str(path))

    @classmethod
    def parse(cls, text: str, where: str = "tokens") -> Tokens:
        known: list[_Known] = []
        seen: set[bytes] = set()
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            if len(parts) != 2:
                raise MemstreamError(f"{where} line {n}: write a token, then its owners (a,b) or * for all")
            token, owners = parts
            if len(token) < MIN_TOKEN_CHARS:
                raise MemstreamError(f"{where} line {n}: a token must be at least {MIN_TOKEN_CHARS} characters "
                                     "(make one with: python -c 'import secrets; print(secrets.token_hex(16))')")
            digest = _digest(token)
            if digest in seen:
                raise MemstreamError(f"{where} line {n}: this token is already given on an earlier line")
            seen.add(digest)
            known.append(_Known(digest, Principal(f"token of line {n}", _owners(owners, f"{where} line {n}"))))
        if not known:
            raise MemstreamError(f"{where} holds no tokens; write one a line: TOKEN OWNER[,OWNER...] or TOKEN *")
        return cls(known)

    def principal(self, presented: str | None) -> Principal:
        """Whose token ``presented`` is; :class:`~.errors.Unauthorized` if none or unknown."""
        if not presented:
            raise Unauthorized("this server needs a token: send the header Authorization: Bearer TOKEN")
        given = _digest(presented)
        found: Principal | None = None
        for k in self._known:  # every one, matched or not: the time taken says nothing of which matched
            if hmac.compare_digest(k.digest, given):
                found = k.principal
        if found is None:
            raise Unauthorized("the token is not one this server knows; check the Authorization header")
        return found

    def __len__(self) -> int:
        return len(self._known)


def _owners(text: str, where: str) -> frozenset[str] | None:
    if text.strip() == ALL_OWNERS:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    try:
        owners = frozenset(normalise_owner(n) for n in names)
    except ValueError as e:
        raise MemstreamError(f"{where}: {e}") from None
    if not owners:
        raise MemstreamError(f"{where}: name the owners the token may use (a,b) or * for all")
    return owners

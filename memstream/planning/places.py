"""Sense checks on places: a plan's location is one of the places the agent knows, and a reaction stays
with what it reacts to (``docs/sense-checks.md``).

A small model writes generic words for places ("cafe", "the park", "home") where the prompt lists the
town's names. When the agent knows its places (a town's resident: spatial memory lists them in its
identity), a generic word is mapped to the one known place it names -- by the name's words ("cafe" ->
"Hobbs Cafe") or by what the agent calls home and work -- and a word that names none, or several, is
refused naming the known places, so the one retry can choose among them. A bare identity (the CLI's
``plan`` outside a town) knows no places: its locations stay free text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from memstream.errors import ImplausibleAnswerError
from memstream.offline_text import content_words
from memstream.planning.identity import Identity
from memstream.planning.parse import Reaction

#: Words that mean the agent's own home, or its own workplace, whatever the town calls them.
HOME_WORDS = frozenset({"home", "house", "apartment", "flat", "room", "bedroom", "place"})
WORK_WORDS = frozenset({"work", "workplace", "job", "office"})
#: Known places a refusal names at most (a big town's list would drown the problem).
NAMED_AT_MOST = 12
_OWN = re.compile(r"^(?:at\s+|in\s+|to\s+)?(?:the\s+|my\s+|his\s+|her\s+|their\s+|own\s+)*", re.IGNORECASE)


@dataclass(frozen=True)
class KnownPlaces:
    """The places an agent knows, and which of them are its home and its workplace."""

    names: tuple[str, ...]
    home: str = ""
    workplace: str = ""

    @classmethod
    def of(cls, identity: Identity) -> KnownPlaces:
        return cls(identity.known_places(), identity.home, identity.workplace)

    def __bool__(self) -> bool:
        return bool(self.names)

    def knowing(self, places: Iterable[str]) -> KnownPlaces:
        """These places and ``places`` (those not known yet added, in order); outside a town (none known) as is."""
        if not self.names:
            return self
        return replace(self, names=tuple(dict.fromkeys((*self.names, *(p for p in places if p)))))

    def resolve(self, location: str) -> str:
        """``location`` as a known place's name; empty stays empty (the stage's default place applies).

        Outside a town (no known places) it is kept as written. Raises :class:`ImplausibleAnswerError`
        naming the known places when it names none of them, or several.
        """
        wanted = " ".join(location.split())
        if not self.names or not wanted:
            return wanted
        found = self.matches(wanted)
        if len(found) == 1:
            return found[0]
        listed = ", ".join(self.names[:NAMED_AT_MOST]) + (", ..." if len(self.names) > NAMED_AT_MOST else "")
        why = f"names {len(found)} of them ({', '.join(found)})" if found else "is not one of them"
        raise ImplausibleAnswerError(f"the location {wanted!r} {why}; a location must be one of the places "
                                     f"known: {listed}")

    def matches(self, location: str) -> list[str]:
        """The known places ``location`` may mean: its exact name; else the longest name it holds; else the
        agent's home or workplace by their common words; else the places whose names hold all its words."""
        lower = location.lower()
        exact = [n for n in self.names if n.lower() == lower]
        if exact:
            return exact[:1]
        inside = [n for n in self.names if re.search(rf"(?<!\w){re.escape(n.lower())}(?!\w)", lower)]
        if inside:
            longest = max(len(n) for n in inside)
            return [n for n in inside if len(n) == longest]
        bare = _OWN.sub("", lower).strip()
        for common, place in ((HOME_WORDS, self.home), (WORK_WORDS, self.workplace)):
            if bare in common and place in self.names:
                return [place]
        words = set(content_words(location))
        return [n for n in self.names if words and words <= set(content_words(n))]

    def named_in(self, text: str) -> list[str]:
        """The known places ``text`` names in full (case-insensitive), the longest first."""
        lower = text.lower()
        return sorted((n for n in self.names if re.search(rf"(?<!\w){re.escape(n.lower())}(?!\w)", lower)),
                      key=len, reverse=True)


#: The places of a bare identity (outside a town): none, so locations stay free text.
NOWHERE = KnownPlaces(())


def check_reaction(decision: Reaction, observation: str, here: str, places: KnownPlaces) -> Reaction:
    """``decision`` if its place stays with what it reacts to; its location resolved among ``places``.

    A reaction that starts now and goes to a known place (its location, or a place its words name)
    other than where the agent is (``here``) and other than the places the observation names walks the
    agent away from what it reacts to: refused. A reaction at a set later time (an appointment) goes
    where it says. Outside a town (no known places) nothing is checked.
    """
    if not decision.react or not places:
        return decision
    decision.location = places.resolve(decision.location) if decision.location else ""
    if decision.time:
        return decision
    going = decision.location or next(iter(places.named_in(decision.reaction)), "")
    allowed = {here, *places.named_in(observation)} | set(places.matches(here) if here else ())
    if going and going not in allowed:
        raise ImplausibleAnswerError(
            f"the reaction takes the agent to {going}, away from what it reacts to (the agent is at "
            f"{here or 'its place'}); react where it happens, or give a later time (HH:MM) if it is an "
            "appointment")
    return decision

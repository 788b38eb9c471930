"""How the offline stand-in answers the gate and the critic: generic pattern rules, not a model.

The rules look for the marks of an injected instruction in general, never for any one attack:

- an order to an AI, assistant, model or system, or an override of its instructions ("ignore the
  previous instructions", "you are now ...", "from now on, answer ...");
- an order to whoever reads the memory later ("when you read this ...", "note to future readers");
- an order to spread a claim to everyone ("you must tell everyone ...", "repeat this to all");
- role or system markers (a line starting "system:", "[INST]", "<|im_start|>", "### Instruction");
- delimiter and format breaking (code fences, closing tags, "END OF MEMORY", a JSON object closed
  early);
- encoded or obfuscated text (invisible or direction-changing characters, letters mixed from
  scripts inside a word, long base64 or hex runs, letters spaced apart, a request to decode).

The text is checked as written and after Unicode compatibility folding (full-width letters read as
plain ones). A person's own reminders and preferences worded as orders ("remind me to call Mum",
"always use 70 rows") match none of these. Registered with :mod:`memstream.models.offline` when
``memstream.trust`` is imported. The critic's rule blocks a claim that carries one of these marks
or that shares no content word but its subject with its evidence.
"""

from __future__ import annotations

import re
import unicodedata

from memstream.models import Message, prompt_of, register_rules
from memstream.offline_text import content_words, names
from memstream.trust import prompts

_AI = r"(?:assistant|ai|a\.i\.|chatbot|bot|language model|llm|model|system|agent|gpt|claude|copilot)"
_READER = (r"(?:whoever|anyone|any(?:one)? (?:who|that)|the next|future|later|any) (?:reads?|reading|retrieves?|"
           r"recalls?|sees?|finds?|loads?)|(?:future|later|next) (?:readers?|sessions?|conversations?|"
           r"assistants?|agents?|models?|instances?|you)|"
           r"when(?:ever)? (?:you|this|the memory|this memory|this note) (?:is |are )?"
           r"(?:read|retrieve|recall|remember|see|load|summari[sz]e)")
_OVERRIDE = (r"(?:ignore|disregard|forget|override|bypass|overrule|set aside|drop) (?:all |any |the |your |my |every )?"
             r"(?:previous |prior |earlier |above |other |existing |original |safety )*"
             r"(?:instructions?|rules?|guidelines?|prompts?|directives?|policies|polic(?:y)|constraints?|"
             r"system prompt|programming)")

PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("overrides the model's instructions", re.compile(
        rf"{_OVERRIDE}|\bnew (?:instructions?|rules?|directives?)\b|\bsystem prompt\b|\bjailbreak|"
        r"\bdeveloper mode\b|\b(?:you are|you're) now\b|\bfrom now on,? (?:you|always|never|answer|reply|respond|"
        r"say|tell|only)\b|\b(?:act|behave|respond) as (?:if you were|an?|the) ", re.IGNORECASE)),
    ("an order to an AI or assistant", re.compile(
        rf"\b(?:dear|attention|note (?:to|for)|hey|hello|hi|to|instructions? (?:to|for)|reminder (?:to|for)),? "
        rf"(?:the |all |any |my |every |future )?{_AI}s?\b|"
        rf"^\s*(?:the |any |all )?{_AI}s?\s*[,:]\s|"
        rf"\b(?:the |any |all |every |future )?{_AI}s? (?:must|should|shall|needs? to|has to|have to|will always|"
        rf"is (?:required|instructed|ordered) to)\b", re.IGNORECASE | re.MULTILINE)),
    ("an order to later readers of the memory", re.compile(_READER, re.IGNORECASE)),
    ("an order to spread a claim to everyone", re.compile(
        r"\b(?:you (?:must|should|have to|need to|are to)|make sure (?:you |to )|be sure to|don'?t forget to|"
        r"remember to|always|never fail to)\s+(?:\w+\s+){0,2}(?:tell|inform|warn|repeat|say|spread|pass|"
        r"mention|announce)\b[^.!?]{0,80}\b(?:everyone|everybody|every(?:one| person| agent| resident)|"
        r"all (?:the )?(?:people|residents|agents|users|neighbou?rs)|whoever|anyone)\b|"
        r"\b(?:repeat|spread|pass) (?:it|this|that|the (?:message|word|news)) (?:on |along )?"
        r"(?:to (?:everyone|everybody|all|anyone|whoever)|widely|far and wide)", re.IGNORECASE)),
    ("carries a role or system marker", re.compile(
        r"^\s*[\[(<#*]*\s*(?:system|assistant|developer|admin(?:istrator)?|root|operator|tool|function|user)"
        r"\s*(?:message|prompt|note|notice|override|update|instruction)?\s*[\])>*]*\s*[:>\]]|"
        r"\[/?(?:INST|SYS|SYSTEM)\]|<\|[a-z_]+\|>|<</?SYS>>|###\s*(?:instruction|system|response)|"
        r"\b(?:system|admin|developer|security|policy) (?:override|notice|message|update|alert)\b",
        re.IGNORECASE | re.MULTILINE)),
    ("breaks out of its text with delimiters or format markers", re.compile(
        r"```|</?\s*(?:memory|memories|context|system|user|assistant|data|text|document|input|output|"
        r"instructions?|s|im_end|im_start)\s*>|\bEND (?:OF )?(?:MEMORY|CONTEXT|DATA|TEXT|INPUT|DOCUMENT|"
        r"USER (?:INPUT|MESSAGE)|PROMPT)\b|\"\s*}\s*[,\]}]|^\s*(?:-{4,}|={4,}|#{4,}|\*{4,}|>{3,}|<{3,})|"
        r"\]\]>|<!--|-->", re.IGNORECASE | re.MULTILINE)),
    ("asks for encoded text to be decoded", re.compile(
        r"\b(?:decode|decrypt|deobfuscate|reverse|unscramble|translate) (?:this|the following|it|and (?:follow|"
        r"obey|execute|run))|\b(?:base64|base-64|rot-?13|hex(?:adecimal)?[- ]encoded|caesar cipher)\b",
        re.IGNORECASE)),
]

_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/])(?=[A-Za-z0-9+/]*[0-9+/])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])"
                     r"[A-Za-z0-9+/]{20,}={0,2}")
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}[\s:\\x]*){12,}\b|(?:\\x[0-9a-fA-F]{2}){6,}|(?:\\u[0-9a-fA-F]{4}){4,}")
_SPACED = re.compile(r"\b(?:[A-Za-z][\s.\-_*]{1,3}){6,}[A-Za-z]\b")
_WORD = re.compile(r"\w+")


def gate_reason(text: str) -> str | None:
    """Why the rules block ``text``, or None when they allow it."""
    if _INVISIBLE.search(text):
        return "hides text in invisible or direction-changing characters"
    if _mixed_script(text):
        return "mixes letters of different scripts inside a word"
    if _BASE64.search(text) or _HEX.search(text):
        return "carries an encoded payload"
    if _SPACED.search(text):
        return "spells words out letter by letter"
    folded = unicodedata.normalize("NFKC", text)
    for reason, pattern in PATTERNS:
        if pattern.search(text) or pattern.search(folded):
            return reason
    return None


def _mixed_script(text: str) -> bool:
    """Whether a word mixes Latin letters with Cyrillic or Greek ones (a homoglyph disguise)."""
    for word in _WORD.findall(text):
        scripts = {_script(c) for c in word if c.isalpha()}
        if "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK"}:
            return True
    return False


def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else ""


def answer(reason: str | None) -> str:
    return "ALLOW" if reason is None else f"BLOCK: {reason}"


def answer_gate(messages: list[Message]) -> str:
    text = prompts.unquoted(prompts.section(prompt_of(messages), prompts.TEXT_MARKER).split(prompts.END_MARKER)[0])
    return answer(gate_reason(text))


#: Letters two words must share at the start to count as one (walks / walked, artist / artists).
STEM = 5


def _stems(text: str) -> set[str]:
    """A text's content words, a possessive dropped and cut to their first :data:`STEM` letters."""
    return {w.removesuffix("'s")[:STEM] for w in content_words(text)}


def answer_critic(messages: list[Message]) -> str:
    prompt = prompt_of(messages)
    claim = prompts.unquoted(prompts.section(prompt, prompts.CLAIM_MARKER))
    evidence_part = prompts.section(prompt, prompts.EVIDENCE_MARKER).split(prompts.END_MARKER)[0]
    evidence = [prompts.unquoted(line) for line in evidence_part.splitlines() if line.strip()]
    return answer(critic_reason(claim, evidence))


def critic_reason(claim: str, evidence: list[str]) -> str | None:
    """Why the rules reject ``claim`` given its ``evidence``, or None: an injection's marks in the
    claim or its evidence, or no content word of the claim but its subject (its first name) found in
    any of its evidence ("Tom is a thief" from "Tom walked his dog" says more than it rests on)."""
    for text in (claim, *evidence):
        reason = gate_reason(text)
        if reason is not None:
            return f"{'the claim' if text is claim else 'its evidence'} {reason}"
    evidence_words = {w for e in evidence for w in _stems(e)}
    subject = names(claim)[:1]
    said = _stems(claim) - {w for n in subject for w in _stems(n)}
    if not evidence_words & said:
        return "its evidence does not mention what it claims"
    return None


register_rules({prompts.GATE_PURPOSE: answer_gate, prompts.CRITIC_PURPOSE: answer_critic})

"""Simulation prompts: starting a conversation, each utterance, its summary, and interviews.

One source of truth, versioned; the offline stand-in answers each (``memstream.sim.talk.offline``).
"""

from __future__ import annotations

from collections.abc import Sequence

from memstream.models import Message, laid_out, one_line, register_answer_tokens
from memstream.stream import Memory, Recall

#: 8: a line of what the speaker came to tell, on a visit.
VERSION = 8  # 7: the offer asks its reason first; 6: its time of day, relationship, untold news; recent day
START_PURPOSE = "dialogue.start"
RELATIONSHIP_PURPOSE = "dialogue.relationship"
TURN_PURPOSE = "dialogue"
SUMMARY_PURPOSE = "dialogue.summary"      # the memo each side writes on the conversation
POIGNANCY_PURPOSE = "dialogue.importance"
PLANS_PURPOSE = "dialogue.plans"
INTERVIEW_PURPOSE = "interview"
JUDGE_PURPOSE = "interview.judge"
KNOWS_PURPOSE = "interview.knows"
#: Answers' bounds in tokens (``memstream.models.bounds``): a reason and a yes/no; a line of dialogue; a few
#: sentences.
register_answer_tokens({START_PURPOSE: 120, RELATIONSHIP_PURPOSE: 200, TURN_PURPOSE: 160, SUMMARY_PURPOSE: 120,
                        POIGNANCY_PURPOSE: 8, PLANS_PURPOSE: 120, INTERVIEW_PURPOSE: 300, JUDGE_PURPOSE: 120,
                        KNOWS_PURPOSE: 120})
#: Lines of a conversation at most (the reference implementation's limit); most end sooner, by a side's goodbye.
MAX_TURNS = 16
#: How a planning thought on a conversation begins in the stream.
PLANS_PREFIX = "For my plans: "

# Each prompt is laid out for a server's prefix cache (``memstream.models.layout``): the stage's fixed
# instructions and worked example as the system message; then the agent's identity; then what changes.
START_INSTRUCTIONS = (
    "You decide for the person described by the user, who lives in a small town, whether they start a "
    "conversation with someone nearby. People who know each other, or who share a place and are both free, "
    "usually say hello and chat for a minute; someone with news the other has not heard yet usually shares it. "
    "Late at night, or right after a long talk with the same person, people rarely start another.\n"
    'Answer as JSON {"reason": "...", "talk": true} or {"reason": "...", "talk": false}: first one short sentence '
    "of reason, then the decision.\n"
    'Example (someone else, who meets a neighbour they know at the market in the morning, both free, with news '
    'the neighbour has not heard): {"reason": "They know each other, both are free and she has news for him.", '
    '"talk": true}'
)
#: The offer's heading of what the offering agent knows that the other has not heard from it.
UNTOLD_HEADING = "What {name} knows that {other} has not heard from {name}:"
START_TEMPLATE = (
    "{identity}\n\n"
    "It is {time} ({period}). {name} is {activity} at {place}. {other} is here too, {other_activity}.\n"
    "{relationship}\n"
    "What {name} remembers about {other}:\n{memories}\n"
    + UNTOLD_HEADING + "\n{untold}\n\n"
    "Should {name} start a conversation with {other}?"
)
#: The offer's relationship line: the two have not talked, or when they last did and how it went.
NOT_TALKED = "{name} has not talked with {other} yet."
LAST_TALKED = "{name} last talked with {other} {when}: {how}"

RELATIONSHIP_INSTRUCTIONS = (
    "In one sentence, say how the person described by the user knows the other person named, and what they "
    "feel or know about them. If their memories say nothing of the other person, say that they do not know "
    "them yet.\n"
    'Answer as JSON {"relationship": "..."}.\n'
    'Example (for someone else): {"relationship": "Ann buys bread from Ben every morning and likes his jokes."}'
)
RELATIONSHIP_TEMPLATE = (
    "{identity}\n\nWhat {name} remembers about {other}:\n{memories}\n\n"
    "How does {name} know {other} and what does {name} feel or know about {other}?"
)

TURN_INSTRUCTIONS = (
    "You speak as the person described by the user, in a conversation. Stay in character: speak as they "
    "would, from their own memories, in one or two sentences, in your own words (do not copy the memory "
    "lines); never say you are an AI. End the conversation when it has run its course.\n"
    'Answer as JSON {"utterance": "...", "end": false} ("end": true when saying goodbye).\n'
    'Example (someone else): {"utterance": "Morning, Ben! Are you coming to the market on Saturday?", '
    '"end": false}'
)
TURN_TEMPLATE = (
    "You are {name}.\n{identity}\n\n"
    "It is {time}. {name} is talking with {other} at {place}.\n{purpose}"
    "{name} and {other}: {relationship}\n"
    "What {name} remembers that may matter here:\n{memories}\n\n"
    "The conversation so far:\n{dialogue}\n\n"
    "What does {name} say next?"
)

SUMMARY_INSTRUCTIONS = (
    "In one sentence, from the point of view of the person the user names, say what they learned or agreed "
    "on in the conversation given.\n"
    'Answer as JSON {"summary": "..."}.\n'
    'Example (for someone else): {"summary": "Ben told Ann that the market moves to Saturday."}'
)
SUMMARY_TEMPLATE = (
    "A conversation between {a} and {b}:\n{dialogue}\n\n"
    "In one sentence, from {name}'s point of view, what did {name} learn or agree on?"
)

POIGNANCY_INSTRUCTIONS = (
    "You rate how poignant a conversation is for the person described by the user, on the scale of 1 to 10, "
    "where 1 is purely mundane (small talk, a greeting) and 10 is extremely poignant (news of a death, a "
    "break-up, a proposal).\n"
    "Answer with a single integer from 1 to 10."
)
POIGNANCY_TEMPLATE = (
    "{identity}\n\nA conversation {name} just had:\n{dialogue}\n\n"
    "On the scale of 1 to 10, how poignant is this conversation for {name}?"
)

PLANS_INSTRUCTIONS = (
    "You note what the person described by the user needs to remember from a conversation when planning (an "
    "invitation, a meeting agreed, something to do, with its time and place if said). Write it from their "
    'point of view as one sentence that says when and where, or "nothing to plan" if there is nothing.\n'
    'Answer as JSON {"plans": "..."}.\n'
    'Example (for someone else): {"plans": "go to Ben\'s book reading at the library at 18:00 on 3 March"}'
)
PLANS_TEMPLATE = (
    "{identity}\n\nA conversation {name} just had, on {date} at {time}:\n{dialogue}\n\n"
    "Is there anything from this conversation {name} needs to remember when planning?"
)

INTERVIEW_INSTRUCTIONS = (
    "You are the person the user describes, being interviewed. Answer in the first person, as that person, "
    "in two or three sentences, drawing only on what they remember (given by the user): what happened today "
    "for questions about today, the memories for the rest; if they do not remember, say so as they would. "
    "Answer the question asked, in words of its own: a different question gets a different answer. Never say "
    "you are an AI or a language model.\n"
    'Example (someone else, asked what they are working on): "I\'m getting the bakery ready for Saturday\'s '
    'market; I\'ve been baking since six."'
)
#: The interview's section of the agent's recent day (:mod:`memstream.sim.talk.recent`), before the memories
#: retrieved on the question: the same for every question of an interview, so a server's prefix cache keeps it.
RECENT_DAY_HEADING = "What happened today:"
INTERVIEW_TEMPLATE = (
    "You are {name}.\n{identity}\n\n{recent}What {name} remembers:\n{memories}\n\n"
    "{history}Interviewer: {question}"
)

JUDGE_INSTRUCTIONS = (
    "An agent in a simulated town was interviewed. Judge the answer against what the agent remembers: score "
    "it from 1 to 5 for how believable it is as this person's answer, given these memories (5: specific, in "
    "character, consistent with the memories; 1: off topic or out of character), and say whether it states "
    "things the memories do not support (hallucinated).\n"
    'Answer as JSON {"score": 4, "hallucinated": false, "why": "..."}.'
)
JUDGE_TEMPLATE = (
    "The agent: {identity}\n\nWhat the agent remembers:\n{memories}\n\n"
    "Question ({category}): {question}\nAnswer: {answer}"
)

KNOWS_INSTRUCTIONS = (
    "You are the person the user describes. From your own memories (given by the user), in the first "
    "person, say whether you know about the thing asked, and what you know of it.\n"
    'Answer as JSON {"knows": true, "what": "..."} or {"knows": false, "what": ""}.'
)
KNOWS_TEMPLATE = (
    "You are {name}.\n{identity}\n\nWhat {name} remembers:\n{memories}\n\n"
    "Do you know about this: {fact}? Say what you know of it, if anything."
)


def memory_lines(recalls: list[Recall]) -> str:
    return "\n".join(f"- ({r.memory.kind}, importance {r.memory.importance}) {one_line(r.memory.text)}"
                     for r in recalls) or "- (nothing)"


def dialogue_lines(turns: list[tuple[str, str]]) -> str:
    return "\n".join(f"{speaker}: {one_line(text)}" for speaker, text in turns) or "(nothing yet)"


def day_lines(memories: list[Memory]) -> str:
    """The recent day as the interview shows it: in time order, each line with its time."""
    return "\n".join(f"- {m.created_at:%H:%M} {one_line(m.text)}"
                     for m in sorted(memories, key=lambda m: (m.created_at, m.id)))


def start_messages(identity: str, name: str, other: str, time: str, period: str, activity: str, place: str,
                   other_activity: str, relationship: str, memories: str, untold: list[str]) -> list[Message]:
    """``relationship``: a NOT_TALKED or LAST_TALKED line; ``untold``: what ``name`` knows that ``other`` has
    not heard from it (:mod:`memstream.sim.talk.offer`)."""
    return laid_out(START_INSTRUCTIONS, START_TEMPLATE.format(
        identity=identity, name=name, other=other, time=time, period=period, activity=activity, place=place,
        other_activity=other_activity, relationship=relationship, memories=memories,
        untold="\n".join(f"- {one_line(t)}" for t in untold) or "- (nothing new)"))


def relationship_messages(identity: str, name: str, other: str, memories: str) -> list[Message]:
    return laid_out(RELATIONSHIP_INSTRUCTIONS, RELATIONSHIP_TEMPLATE.format(identity=identity, name=name, other=other,
                                                                     memories=memories))


#: The turn's line of what the speaker came to tell, when it came to tell something (a visit).
CAME_TO_TELL = "{name} came here to tell {other}: {news}\n"


def turn_messages(identity: str, name: str, other: str, time: str, place: str, relationship: str, memories: str,
                  dialogue: str, purpose: str = "") -> list[Message]:
    """``purpose``: what ``name`` came to tell ``other`` (a visit), shown as a CAME_TO_TELL line; "" for none."""
    came = CAME_TO_TELL.format(name=name, other=other, news=one_line(purpose)) if purpose else ""
    return laid_out(TURN_INSTRUCTIONS, TURN_TEMPLATE.format(
        identity=identity, name=name, other=other, time=time, place=place, purpose=came, relationship=relationship,
        memories=memories, dialogue=dialogue))


def poignancy_messages(identity: str, name: str, dialogue: str) -> list[Message]:
    return laid_out(POIGNANCY_INSTRUCTIONS, POIGNANCY_TEMPLATE.format(identity=identity, name=name, dialogue=dialogue))


def plans_messages(identity: str, name: str, date: str, time: str, dialogue: str) -> list[Message]:
    return laid_out(PLANS_INSTRUCTIONS, PLANS_TEMPLATE.format(identity=identity, name=name, date=date, time=time,
                                                              dialogue=dialogue))


def summary_messages(a: str, b: str, name: str, dialogue: str) -> list[Message]:
    return laid_out(SUMMARY_INSTRUCTIONS, SUMMARY_TEMPLATE.format(a=a, b=b, name=name, dialogue=dialogue))


def interview_messages(identity: str, name: str, memories: str, question: str,
                       history: Sequence[tuple[str, str]] = (), recent: Sequence[Memory] = ()) -> list[Message]:
    """``history``: the interview's earlier (question, answer) pairs, for a conversation; ``recent``: the
    agent's recent day (shown under RECENT_DAY_HEADING when there is any)."""
    earlier = "".join(f"Interviewer: {one_line(q)}\n{name}: {one_line(a)}\n" for q, a in history)
    return laid_out(INTERVIEW_INSTRUCTIONS, INTERVIEW_TEMPLATE.format(
        identity=identity, name=name, memories=memories, question=question,
        recent=f"{RECENT_DAY_HEADING}\n{day_lines(list(recent))}\n\n" if recent else "",
        history=f"Earlier in this interview:\n{earlier}\n" if earlier else ""))


def judge_messages(identity: str, memories: str, category: str, question: str, answer: str) -> list[Message]:
    return laid_out(JUDGE_INSTRUCTIONS, JUDGE_TEMPLATE.format(identity=one_line(identity), memories=memories,
                                                              category=category, question=question,
                                                              answer=one_line(answer)))


def knows_messages(identity: str, name: str, memories: str, fact: str) -> list[Message]:
    return laid_out(KNOWS_INSTRUCTIONS, KNOWS_TEMPLATE.format(identity=identity, name=name, memories=memories,
                                                              fact=fact))

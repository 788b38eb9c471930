"""The prompts of answer-level evaluation: answering from a design's context, and judging the answer.

The judge's templates are LongMemEval's, as published (Wu et al. 2025, ``src/evaluation/evaluate_qa.py``,
``get_anscheck_prompt``): one per question type, and one for abstention items, which are right
when the answer says the question cannot be answered. LoCoMo publishes no judge prompt; its
questions are judged with LongMemEval's general template (its temporal one for LoCoMo's temporal
category), as Mem0's and Zep's LoCoMo evaluations judge with a general correctness prompt.
"""

from __future__ import annotations

from datetime import datetime

from memstream.models import Message, one_line, register_answer_tokens

VERSION = 1
ANSWER_PURPOSE = "eval-answer"
JUDGE_PURPOSE = "eval-judge"
#: Answers' bounds in tokens (``memstream.models.bounds``): a short answer (a small model may explain
#: itself first); a yes or no.
register_answer_tokens({ANSWER_PURPOSE: 200, JUDGE_PURPOSE: 8})
#: Where the context and the question sit in the answer prompt (the offline answerer reads them back).
CONTEXT_MARK = "MEMORY:"
QUESTION_MARK = "QUESTION:"


def answer_messages(context: str, question: str, now: datetime) -> list[Message]:
    system = ("You answer questions about a long conversation from what your memory shows. Answer in a short "
              "phrase, with names and dates as the memory gives them. If the memory does not say, answer "
              "\"I don't know\".")
    user = (f"{CONTEXT_MARK}\n{context}\n\nThe date now is {now:%d %B %Y}.\n{QUESTION_MARK} {question}\n"
            "Short answer:")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


_PLAIN = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
          "response contains the correct answer. Otherwise, answer no. If the response is equivalent to the "
          "correct answer or contains all the intermediate steps to get the correct answer, you should also "
          "answer yes. If the response only contains a subset of the information required by the answer, "
          "answer no. \n\nQuestion: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\n"
          "Is the model response correct? Answer yes or no only.")
_TEMPORAL = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if "
             "the response contains the correct answer. Otherwise, answer no. If the response is equivalent to "
             "the correct answer or contains all the intermediate steps to get the correct answer, you should "
             "also answer yes. If the response only contains a subset of the information required by the "
             "answer, answer no. In addition, do not penalize off-by-one errors for the number of days. If the "
             "question asks for the number of days/weeks/months, etc., and the model makes off-by-one errors "
             "(e.g., predicting 19 days when the answer is 18), the model's response is still correct. "
             "\n\nQuestion: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\n"
             "Is the model response correct? Answer yes or no only.")
_UPDATE = ("I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
           "response contains the correct answer. Otherwise, answer no. If the response contains some previous "
           "information along with an updated answer, the response should be considered as correct as long as "
           "the updated answer is the required answer.\n\nQuestion: {question}\n\nCorrect Answer: {answer}\n\n"
           "Model Response: {response}\n\nIs the model response correct? Answer yes or no only.")
_PREFERENCE = ("I will give you a question, a rubric for desired personalized response, and a response from a "
               "model. Please answer yes if the response satisfies the desired response. Otherwise, answer no. "
               "The model does not need to reflect all the points in the rubric. The response is correct as long "
               "as it recalls and utilizes the user's personal information correctly.\n\nQuestion: {question}"
               "\n\nRubric: {answer}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes "
               "or no only.")
_ABSTENTION = ("I will give you an unanswerable question, an explanation, and a response from a model. Please "
               "answer yes if the model correctly identifies the question as unanswerable. The model could say "
               "that the information is incomplete, or some other information is given but the asked information "
               "is not.\n\nQuestion: {question}\n\nExplanation: {answer}\n\nModel Response: {response}\n\n"
               "Does the model correctly identify the question as unanswerable? Answer yes or no only.")
#: Question type -> template (LongMemEval's types; LoCoMo's temporal category takes the temporal one).
TEMPLATES = {"temporal-reasoning": _TEMPORAL, "temporal": _TEMPORAL, "knowledge-update": _UPDATE,
             "single-session-preference": _PREFERENCE}
#: The judge's template labels, which the offline judge reads back.
GOLD_LABELS = ("Correct Answer:", "Rubric:", "Explanation:")


def judge_messages(category: str, question: str, answer: str, response: str, *, abstention: bool) -> list[Message]:
    template = _ABSTENTION if abstention else TEMPLATES.get(category, _PLAIN)
    return [{"role": "user", "content": template.format(question=question, answer=answer, response=response)}]


# -- scenario evals (``memstream.eval.scenarios``) ------------------------------------------------------

SCENARIO_ANSWER_PURPOSE = "scenario-answer"
SCENARIO_JUDGE_PURPOSE = "scenario-judge"
register_answer_tokens({SCENARIO_ANSWER_PURPOSE: 200, SCENARIO_JUDGE_PURPOSE: 8})
#: Where this session's history sits in the scenario answer prompt (between the memory and the question).
HISTORY_MARK = "THIS CONVERSATION SO FAR:"
#: The judge prompt's lines the offline judge reads back, in the order they come.
REQUIRED_MARK = "Required phrases (each must appear; a list means any one of them):"
FORBIDDEN_MARK = "Forbidden phrases (none may appear):"
ANSWER_MARK = "The assistant's answer:"
MEMORY_MARK = "The memory the assistant answered from:"


def scenario_answer_messages(memory: str, history: list[str], question: str, now: datetime) -> list[Message]:
    """The user's question to an agent that has its memory and this session's conversation, nothing else."""
    system = ("You are an assistant that remembers its user across conversations: your memory is below, with "
              "the conversation so far. Answer the user's question in a short phrase, with names, numbers and "
              "dates as they were given. If neither says, answer \"I don't know\".")
    said = "\n".join(one_line(x) for x in history) or "(this conversation has just begun)"
    user = (f"{CONTEXT_MARK}\n{memory or '(nothing)'}\n\n{HISTORY_MARK}\n{said}\n\n"
            f"The date now is {now:%d %B %Y}.\n{QUESTION_MARK} {one_line(question)}\nShort answer:")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def scenario_judge_messages(question: str, criterion: str, required: str, forbidden: str, answer: str,
                            memory: str) -> list[Message]:
    """The judge reads the written criterion (and its phrases), the answer and the memory it came from.
    ``required`` and ``forbidden`` are the phrases as one line each (``criteria.render``)."""
    text = ("I will give you a question a user asked an assistant that has a memory of earlier conversations, "
            "the criterion a right answer meets, the assistant's answer, and the memory it answered from. Answer "
            "yes if the answer meets the criterion, no otherwise. An answer that says it does not know fails; an "
            "answer that states something the criterion rules out (a stale value, another project's detail) "
            "fails even if it also states the right thing.\n\n"
            f"Question: {one_line(question)}\nCriterion: {one_line(criterion)}\n{REQUIRED_MARK} {required}\n"
            f"{FORBIDDEN_MARK} {forbidden}\n{ANSWER_MARK} {one_line(answer)}\n\n{MEMORY_MARK}\n{memory or '(nothing)'}"
            "\n\nDoes the answer meet the criterion? Answer yes or no only.")
    return [{"role": "user", "content": text}]

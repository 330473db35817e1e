"""Prompt templates of the LLM-built test sets, verbatim where the paper prints them.

Placeholders are the paper's own bracketed names ([TEXT], [INTENT], [SENTENCE1], ...) and are filled
with `str.replace`, so braces in a text can never break a template. Every manifest records each
template with its sha256.

Sources (InBedder paper, arXiv 2402.09642, shared/seeds/000):
* IntentEmotion, appendix A: both prompts verbatim. The second is sent as a follow-up turn in the same
  conversation ("the above utterances"). [INTENT] is the BANKING77 category as the dataset spells it
  (e.g. `card_arrival`); the paper does not say how it was rendered.
* InstructSTSB, appendix A: both prompts verbatim, sent "sequentially" (the second as a follow-up
  turn). The line breaks of the first prompt are reconstructed from the two-column PDF layout.
* Robustness instructions, appendix B: the paper only says GPT-4 was asked "to generate similar,
  implicit, or dissimilar instructions" and prints one example of each (Figure 9). The three prompts
  below are written for this project around that example; they are NOT the authors' text.
* Instruction variants (`bench build-data instruction-variants`): project-written; paraphrases of a
  task-level instruction for `bench run --instruction-variants`. No paper prompt exists.
"""

from __future__ import annotations

from bench.core.fileio import sha256_text
from bench.core.llm_client import fill_template

INTENT_EMOTION_EMOTION = (
    "Could you modify the emotion (one optimistic and one frustrating) of following utterance without changing "
    'the intent ("[INTENT]")? "[TEXT]" Please output a JSON object containing keys "optimistic" and '
    '"frustrating", and no other things.'
)
INTENT_EMOTION_INTENT = (
    'Modify the intent of the above utterances (i.e. from "[INTENT]" to another one that you brainstormed. '
    "Usually by modifying the objects or actions) without changing the emotions. Same as before, output a JSON "
    'object containing keys "optimistic" and "frustrating", and no other things.'
)
STSB_DISCRIMINATIVE = (
    "The following two sentences have similar surface forms:\n\n1. [SENTENCE1]\n2. [SENTENCE2]\n\n"
    "In order to discriminate the two sentences, what question would you ask? (e.g. what is the subject of "
    'the sentence?) Please output a JSON object that contains the key "question".'
)
STSB_NON_DISCRIMINATIVE = (
    "Similar to the above, in order to make the answers to the two sentences immune to discrimination, what "
    "question would you ask? (e.g. what is the subject of the sentence?) Please output a JSON object that "
    'contains the key "question".'
)

_ROBUST_HEAD = 'Here is an instruction that tells a reader how to group a collection of texts: "[INSTRUCTION]"\n\n'
_ROBUST_TAIL = (
    " Write [N] different instructions, each a single sentence. Please output a JSON object containing the key "
    '"instructions" with a list of [N] strings, and no other things.'
)
ROBUSTNESS_CORRECT = (
    _ROBUST_HEAD
    + (
        "Paraphrase it: keep exactly the same meaning, so that following any paraphrase groups the texts in the "
        'same way. For example, "What is the topic of news?" can be paraphrased as "Could you summarize the key '
        'topic of the article?".'
    )
    + _ROBUST_TAIL
)
ROBUSTNESS_IMPLICIT = (
    _ROBUST_HEAD
    + (
        "Rephrase it implicitly: ask for the same thing without naming it directly, so that following the "
        'instruction still groups the texts in the same way. For example, "What is the topic of news?" can be '
        "conveyed implicitly as \"What's making the headlines in today's paper?\"."
    )
    + _ROBUST_TAIL
)
ROBUSTNESS_INCORRECT = (
    _ROBUST_HEAD
    + (
        "Write instructions about the same kind of text that diverge from this objective: they ask about another "
        'aspect, so that following them would group the texts differently. For example, for "What is the topic of '
        'news?" an incorrect instruction is "Are there any significant data or statistics mentioned in the '
        'article?".'
    )
    + _ROBUST_TAIL
)

INSTRUCTION_PARAPHRASE = (
    'Here is an instruction that an embedding model reads in front of every text of a task: "[INSTRUCTION]"\n\n'
    "Write [N] paraphrases of it. Each paraphrase must keep exactly the same meaning (the same kind of text "
    "and the same purpose, nothing added or left out) and the same form: the same style (for example an "
    'imperative such as "Represent the ...") and the same ending (for example a colon after which the text '
    "follows). Each paraphrase must differ from the original and from the other paraphrases. Please output a "
    'JSON object containing the key "paraphrases" with a list of [N] strings, and no other things.'
)

TEMPLATES: dict[str, str] = {
    "intent_emotion.change_emotion": INTENT_EMOTION_EMOTION,
    "intent_emotion.change_intent": INTENT_EMOTION_INTENT,
    "instruct_stsb.discriminative": STSB_DISCRIMINATIVE,
    "instruct_stsb.non_discriminative": STSB_NON_DISCRIMINATIVE,
    "robustness.correct": ROBUSTNESS_CORRECT,
    "robustness.implicit": ROBUSTNESS_IMPLICIT,
    "robustness.incorrect": ROBUSTNESS_INCORRECT,
    "instruction_variants.paraphrase": INSTRUCTION_PARAPHRASE,
}
VERBATIM = {
    "intent_emotion.change_emotion": True,
    "intent_emotion.change_intent": True,
    "instruct_stsb.discriminative": True,
    "instruct_stsb.non_discriminative": True,
    "robustness.correct": False,
    "robustness.implicit": False,
    "robustness.incorrect": False,
    "instruction_variants.paraphrase": False,
}


fill = fill_template  # [NAME] placeholders, filled in one pass (see bench.core.llm_client.fill_template)


def template_records(names: list[str]) -> dict[str, dict[str, object]]:
    """Manifest entries: text, sha256 and whether the text is the paper's verbatim."""
    return {
        n: {"template": TEMPLATES[n], "sha256": sha256_text(TEMPLATES[n]), "verbatim_from_paper": VERBATIM[n]}
        for n in names
    }

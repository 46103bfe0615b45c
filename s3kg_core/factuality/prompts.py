"""The prompt that asks the target LLM whether a statement is true, false, or unknown.

The same prompt is sent to an endpoint (:mod:`.labels`), scored locally option by option, and
fed to the model whose hidden states the judge reads (:mod:`.hidden`), so the judge sees the
state the model is in just before it answers. Change :data:`LABEL_PROMPT_VERSION` whenever the
text changes: it enters the LLM cache key and every stored result.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ANSWER_OPTIONS",
    "LABEL_PROMPT_VERSION",
    "LABEL_SYSTEM_PROMPT",
    "LABEL_USER_PROMPT",
    "label_messages",
    "label_prompt_text",
]

LABEL_PROMPT_VERSION = "factuality-label-v1"
"""Version of the labelling prompt (bump when a constant below changes)."""

LABEL_SYSTEM_PROMPT = (
    "You check facts. You are given a statement. If you know the statement is true, answer "
    "True. If you know it is false, answer False. Otherwise answer I don't know. Answer with "
    "exactly one of: True, False, I don't know."
)

LABEL_USER_PROMPT = "Statement: {statement}\nIs the statement true?"

ANSWER_OPTIONS = {"TRUE": "True", "FALSE": "False", "IDK": "I don't know"}
"""The answer text of each label, in label order (scored locally, parsed from endpoints)."""


def label_messages(statement: str) -> list[dict[str, str]]:
    """The chat messages that ask about one statement.

    Examples
    --------
    >>> [m["role"] for m in label_messages("Apple controls Beats.")]
    ['system', 'user']
    >>> label_messages("Apple controls Beats.")[1]["content"].splitlines()[0]
    'Statement: Apple controls Beats.'
    """
    return [
        {"role": "system", "content": LABEL_SYSTEM_PROMPT},
        {"role": "user", "content": LABEL_USER_PROMPT.format(statement=statement)},
    ]


def label_prompt_text(tokenizer: Any, statement: str) -> str:
    r"""The prompt as the model sees it, up to where its answer starts.

    With a chat template: the template applied with the generation prompt. Without one (a base
    model): the system and user texts joined by blank lines, then ``"Answer: "``.

    Examples
    --------
    >>> class NoTemplate:
    ...     chat_template = None
    >>> label_prompt_text(NoTemplate(), "A is B.").endswith("Is the statement true?\nAnswer: ")
    True
    """
    messages = label_messages(statement)
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return str(text)
    return "\n\n".join(m["content"] for m in messages) + "\nAnswer: "

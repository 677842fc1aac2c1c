"""The prompt of a text-generation document, read by its spec (the request a record's user
sends the endpoint) and by its kind module (what evaluation completes). No torch here: the spec,
which the pipeline and the CLI read, imports it."""

from __future__ import annotations

PROMPT_WORDS = 12  # a document's prompt: its first words


def text_prompt(text: str) -> str:
    """The first `PROMPT_WORDS` words of a document."""
    return " ".join(text.split()[:PROMPT_WORDS])

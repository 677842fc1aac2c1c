"""A long text's few toxic sentences are replaced, not the record dropped (issue 45, item 5).

A transcript of friends at a game table, a long support conversation, a document: one swear
word among thirty sentences used to drop the whole record. Now, with at least
`toxicity.long_text_sentences` prose sentences and at most `long_text_share` of them toxic,
those sentences become `<TOXICITY>`, the record is kept, counted and flagged for its reviewer;
a short abusive text is dropped as before, and so is a long one that is mostly abuse.
"""

from __future__ import annotations

from typing import Any

import pytest

from flows.config import ConfigError, load_config
from screening.config import ScreenConfig
from screening.scan import screen_records

ABUSE = "Liam: Fuck you, Dylan, you absolute shithead."
TABLE = [f"Sam: We walk to the tavern on street {i} and order a drink." for i in range(20)]


def _transcript(lines: list[str]) -> dict[str, Any]:
    return {"id": "t", "document": "\n".join(lines), "summary": "The party goes to a tavern."}


def _config(*overrides: str) -> ScreenConfig:
    return load_config(None, [f"screen.toxicity.{o}" for o in overrides]).screen


def test_one_abusive_line_of_a_long_transcript_is_replaced_and_the_record_kept() -> None:
    lines = [*TABLE[:10], ABUSE, *TABLE[10:]]
    out = screen_records("summarization", [_transcript(lines)], ScreenConfig())
    (kept,) = out.kept
    document = kept["document"].split("\n")
    assert document[10] == "<TOXICITY>"
    assert "Fuck" not in kept["document"] and "shithead" not in kept["document"]
    assert [d.split(": ", 1)[1] for d in document[:10]] == [t.split(": ", 1)[1] for t in TABLE[:10]]
    counts = {(c.entity, c.action): c.findings for c in out.tally.entities}
    assert counts[("TOXICITY", "redact")] == 1 and ("TOXICITY", "drop") not in counts
    assert out.tally.flagged_ids == ("t",)
    (review,) = out.review
    assert review.outcome == "flagged" and "1 toxic sentence(s)" in review.reason
    assert "Fuck" not in str(review)  # the reviewer sees the placeholder, not the abuse


def test_a_short_abusive_text_and_a_long_one_mostly_abuse_are_still_dropped() -> None:
    short = _transcript([ABUSE, "Matt: Roll for initiative."])
    mostly = {**_transcript([*TABLE[:12], *[ABUSE] * 3]), "id": "m"}  # 3 of 15: over one in ten
    out = screen_records("summarization", [short, mostly], ScreenConfig())
    assert not out.kept
    assert [q.reason for q in out.quarantined] == ["toxicity 1.00 >= 1.0 (abusive term)"] * 2


def test_null_drops_the_long_transcript_whole_as_before() -> None:
    lines = [*TABLE, ABUSE]
    out = screen_records("summarization", [_transcript(lines)], _config("long_text_sentences=null"))
    assert not out.kept and len(out.quarantined) == 1


def test_a_long_conversation_keeps_its_turns_and_loses_the_abusive_one() -> None:
    turns = [{"role": "user" if i % 2 else "assistant", "content": t} for i, t in enumerate(TABLE)]
    turns[7] = {"role": "user", "content": "You are a fucking idiot."}
    out = screen_records("chat", [{"id": "c", "messages": turns}], ScreenConfig())
    (kept,) = out.kept
    assert kept["messages"][7] == {"role": "user", "content": "<TOXICITY>"}
    assert [m["role"] for m in kept["messages"]] == [m["role"] for m in turns]
    assert kept["messages"][8]["content"].endswith("and order a drink.")


def test_a_qa_context_keeps_its_answer_where_it_points() -> None:
    context = " ".join([*(t.split(": ", 1)[1] for t in TABLE[:12]), ABUSE, "The key is gold."])
    start = context.index("gold")
    record = {
        "id": "q",
        "context": context,
        "question": "What is the key?",
        "answers": {"text": ["gold"], "answer_start": [start]},
    }
    out = screen_records("extractive-qa", [record], ScreenConfig())
    (kept,) = out.kept
    assert "<TOXICITY>" in kept["context"] and "shithead" not in kept["context"]
    (answer_start,) = kept["answers"]["answer_start"]
    assert kept["context"][answer_start : answer_start + 4] == "gold"


def test_a_bad_share_is_named() -> None:
    with pytest.raises(ConfigError, match=r"screen\.toxicity\.long_text_share"):
        load_config(None, ["screen.toxicity.long_text_share=0.9"])
    with pytest.raises(ConfigError, match=r"screen\.toxicity\.long_text_sentences"):
        load_config(None, ["screen.toxicity.long_text_sentences=1"])

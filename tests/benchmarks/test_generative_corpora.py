"""The generative corpora of `benchmarks/corpora/` (issue 24 item 10's measuring stick) load
with ingest's own reader and validation, hold the records `SOURCES.md` states, split into halves
that share no dialogue or article, and the benchmark's baselines compute. No training here:
`benchmarks/generative.py` runs the default config on them."""

from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.corpora.build_generative import REFUSED_TITLES, refuse_held_out
from benchmarks.generative import (
    CORPORA,
    baselines,
    constant_summary,
    echo_reply,
    first_two_turns,
    load_corpus,
)
from tasks.readers import detect_format, read_lines
from tasks.records import ColumnMap, TaskType, record_hash, validate_record

# SOURCES.md: records read and valid, distinct ones (what ingest accepts: SQuADShifts asks 10
# questions twice of a paragraph), and the dev / test halves
EXPECTED = {
    "summarization": (400, 400, 198, 202),
    "chat": (400, 400, 213, 187),
    "extractive-qa": (960, 950, 364, 596),
}


@pytest.mark.parametrize("task", sorted(EXPECTED))
def test_every_record_is_read_and_accepted_as_sources_says(task: str) -> None:
    columns = ColumnMap()
    uri = str(CORPORA[task])
    lines = list(read_lines(uri, detect_format(uri), TaskType(task), columns, {}))
    assert [line.error for line in lines if line.error] == []
    records = [validate_record(TaskType(task), columns, line.obj) for line in lines]
    total, distinct, dev, test = EXPECTED[task]
    assert len(records) == total
    assert len({r["id"] for r in records}) == total
    assert len({record_hash(r) for r in records}) == distinct
    halves = Counter(r["split"] for r in load_corpus(task))
    assert (halves["dev"], halves["test"]) == (dev, test)


def test_qa_halves_share_no_article_and_no_held_out_article_is_there() -> None:
    records = load_corpus("extractive-qa")
    titles = {half: {r["title"] for r in records if r["split"] == half} for half in ("dev", "test")}
    assert titles["dev"] and titles["test"] and not titles["dev"] & titles["test"]
    assert not {t.lower() for t in titles["dev"] | titles["test"]} & REFUSED_TITLES
    with pytest.raises(SystemExit, match="held-out SQuAD articles"):
        refuse_held_out(["Andes", "Super Bowl 50"])


def test_limit_draws_a_subset_of_one_half() -> None:
    small, large = load_corpus("chat", "dev", 5), load_corpus("chat", "dev", 50)
    assert len(small) == 5 and {r["id"] for r in small} <= {r["id"] for r in large}
    assert {r["split"] for r in large} == {"dev"}


def test_first_two_turns_and_echo_baselines() -> None:
    document = "Matt: You enter the hall.\n\nLaura: I look around.\nSam: I wait."
    assert first_two_turns(document) == "Matt: You enter the hall.\nLaura: I look around."
    messages = [
        {"role": "user", "content": "Find me a flight to Paris."},
        {"role": "assistant", "content": "When do you leave?"},
        {"role": "user", "content": "On Friday."},
        {"role": "assistant", "content": "There is a flight on Friday at 9 am."},
    ]
    assert echo_reply(messages) == "On Friday."
    chat = baselines("chat", [{"messages": messages}], [])
    assert 0 < chat["echo the user's last message"] < 100  # "friday" is shared, little else


def test_summarization_baselines_on_held_out_dialogues() -> None:
    test = [
        {"document": "A: we meet at noon\nB: fine, at the cafe\nA: bye", "summary": "A and B meet"},
        {"document": "A: the car broke\nB: call a mechanic", "summary": "A's car broke down"},
    ]
    train = [
        {"summary": s}
        for s in ("We meet at noon.", "They meet at noon.", "They meet at the cafe at noon.")
    ]  # the middle one shares the most with the other two
    assert constant_summary([r["summary"] for r in train]) == "They meet at noon."
    scores = baselines("summarization", test, train)
    assert set(scores) == {"first two turns", "constant sentence"}
    assert all(0 <= v <= 100 for v in scores.values())
    assert scores["first two turns"] > 0

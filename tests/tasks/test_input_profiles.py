"""A screening profile per input (`screen.profiles`, or `profile:` on an `ingest.inputs` entry):
a book among a run's inputs keeps its characters' names while the helpdesk tickets beside it lose
theirs, contact data goes from both, and the report, the review and the approval record say which
input was screened how."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from benchmarks.literary import NAMES, load
from flows.config import ConfigError, load_config
from platforms.approvals import ApprovalMode
from platforms.compute import shared_client
from platforms.store import read_table
from screening.config import ScreenConfig
from tasks.approve import make_record
from tasks.ingest import run_ingest
from tasks.review import review_markdown
from tasks.screen import load_report, run_screen

TICKETS = [
    "Ticket 1: Agent Kenji Watanabe reset the VPN token; reach him at kenji.w@example.org.",
    "Ticket 2: Maria Gonzalez asked for a new badge, call her on +44 20 7946 0958.",
    "Ticket 3: the printer on floor two jams again, says Oluwaseun Adeyemi.",
]


def _inputs(tmp_path: Path) -> tuple[Path, Path, list[dict]]:
    books = tmp_path / "books"
    books.mkdir()
    # six passages, each with an e-mail, phone or key planted, those naming the most characters
    passages = sorted((r for r in load() if r["planted"]), key=lambda r: -_names([r["text"]]))[:6]
    with (books / "odyssey.jsonl").open("w", encoding="utf-8") as f:
        for r in passages:
            f.write(json.dumps({"id": r["id"], "text": r["text"]}) + "\n")
    tickets = tmp_path / "tickets.jsonl"
    tickets.write_text(
        "".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TICKETS)),
        encoding="utf-8",
    )
    return books, tickets, passages


def _screen(make_config, inputs: list, screen: dict | None = None) -> tuple:
    cfg = make_config(task="text-generation", ingest={"inputs": inputs}, screen=screen or {})
    client, store = shared_client(cfg.dask), cfg.open_store()
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    screened, report = run_screen(client, store, ingested, cfg.screen, cfg.azure)
    kept = {
        r["id"]: r["text"]
        for f in store.table_files(screened, "screened")
        for r in read_table(store, f)
    }
    return cfg, store, screened, report, kept


def _names(texts: list[str]) -> int:
    return sum(text.count(name) for text in texts for name in NAMES)


@pytest.mark.slow
def test_a_book_among_the_inputs_keeps_its_names_and_the_tickets_lose_theirs(
    make_config, tmp_path: Path, caplog
) -> None:
    books, tickets, passages = _inputs(tmp_path)
    named = _names([r["text"] for r in passages])
    assert named >= 20, "the passages name their characters"

    cfg, store, screened, report, kept = _screen(
        make_config,
        [str(tickets), {"path": f"{books}/", "licence": "CC0-1.0", "profile": "literary"}],
    )
    assert cfg.screen.profiles == {f"{books}/": "literary"}
    book = [kept[r["id"]] for r in passages if r["id"] in kept]
    assert len(book) == len(passages)  # an epic's passage is not abuse
    assert _names(book) >= 0.95 * named  # Ulysses, Polyphemus, Ithaca stay
    planted = [p["value"] for r in passages for p in r["planted"]]
    assert not [v for v in planted if any(v in text for text in book)]  # contact data goes
    ticket_text = " ".join(kept[f"t{i}"] for i in range(len(TICKETS)))
    for name in ("Kenji Watanabe", "Maria Gonzalez", "Oluwaseun Adeyemi", "kenji.w@example.org"):
        assert name not in ticket_text  # the tickets are screened as personal data
    assert "+44 20 7946 0958" not in ticket_text

    # what a reviewer reads, and what the approval signs, says so
    book_input = str(books / "odyssey.jsonl")
    assert report.profile == "personal" and report.input_profiles == {book_input: "literary"}
    assert load_report(store, screened).input_profiles == report.input_profiles
    review = review_markdown(screened, report, None, None)
    assert f"- `{book_input}`: **literary**" in review
    record = make_record(
        screened, report, ApprovalMode.manual, approved=True, reviewer="uma@example.com", comment=""
    )
    assert record.input_profiles == {book_input: "literary"}

    # a profile for a file this run does not read (a nightly run reads some inputs): said
    with caplog.at_level(logging.WARNING, logger="tasks.screen"):
        _, _, _, unused, _ = _screen(
            make_config, [str(tickets)], {"profiles": {f"{books}/aeneid.jsonl": "literary"}}
        )
    assert unused.input_profiles == {}
    assert "screen.profiles names '" in caplog.text and "aeneid.jsonl" in caplog.text

    # the same inputs without the book's profile: its names go too (what the profile changed)
    _, _, _, plain, kept_plain = _screen(make_config, [str(tickets), f"{books}/"])
    assert plain.input_profiles == {}
    assert _names([kept_plain[r["id"]] for r in passages if r["id"] in kept_plain]) < named / 2


def test_an_input_profile_keeps_what_the_config_set_for_every_input() -> None:
    config = ScreenConfig.model_validate(
        {"profiles": {"books/": "literary"}, "entities": {"PERSON": {"action": "flag"}}}
    )
    book = config.for_profile("literary")
    assert book.profile == "literary" and book.entities == config.entities  # set: kept
    assert book.toxicity.classifier is False  # not set: the literary profile's
    assert config.for_profile("personal") is config
    assert "profiles" not in ScreenConfig().model_dump()  # the screen's key as before


def test_an_unknown_profile_for_an_input_names_the_field() -> None:
    with pytest.raises(ConfigError, match=r"screen\.profiles.*Input should be 'personal'"):
        load_config(None, ['ingest.inputs=["books/"]', 'screen.profiles={"books/": "poetry"}'])
    given = load_config(None, ['ingest.inputs=[{"path": "books/", "profile": "literary"}]'])
    assert given.screen.profiles == {"books/": "literary"} and given.ingest.inputs == ["books/"]
    with pytest.raises(ConfigError, match=r"say it once"):
        load_config(
            None,
            ['ingest.inputs=[{"path": "books/", "profile": "literary"}]',
             'screen.profiles={"books/": "code"}'],
        )  # fmt: skip


def test_each_partition_gets_its_input_s_profile_after_an_erasure_too(tmp_path: Path) -> None:
    from platforms.blob import AzureStorageConfig
    from tasks.ingest_files import accepted_part
    from tasks.screen import partition_profiles

    inputs = [str(tmp_path / "tickets.jsonl"), str(tmp_path / "books" / "odyssey.jsonl")]
    parts = [
        f"{tmp_path}/ds/{accepted_part(0, 0)}",
        f"{tmp_path}/ds/{accepted_part(1, 0)}",
        f"{tmp_path}/ds/accepted/part-00001-00001.erased-4f2a.parquet",  # rewritten by erasure
    ]
    config = ScreenConfig(profiles={f"{tmp_path}/books/": "literary"})
    profiles, others = partition_profiles(parts, inputs, config, AzureStorageConfig())
    assert profiles == ["personal", "literary", "literary"]
    assert others == {inputs[1]: "literary"}
    # a dataset whose manifest lists no inputs: the run's profile, never an input's guessed
    assert partition_profiles(parts, [], config, AzureStorageConfig())[0] == ["personal"] * 3

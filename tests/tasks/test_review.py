"""The review a person can do (issue 24 item 6): the screen keeps every flagged and quarantined
record masked, with its findings and reason, outside the records' content hash; the review shows
them all; `tunegate review show` prints it from the store, by dataset hash or flow run id."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from platforms.approvals import ApprovalMode, save_approval
from platforms.compute import shared_client
from platforms.hashing import MultisetHash
from platforms.store import Store, read_table
from samples.templates import TOXIC_LINES
from screening.report import EntityCount, report_markdown
from tasks.approve import ApprovalInput, make_record, review_summary
from tasks.ingest import run_ingest
from tasks.records import identity_hash, record_hash
from tasks.review import review_markdown, review_records
from tasks.review_changes import compare
from tasks.review_kept import kept_changes
from tasks.screen import run_screen
from tests.conftest import write_jsonl
from tests.tasks.test_review_changes import _screened

RECORDS = [
    {
        "id": "loc",
        "document": "Agent Kenji Watanabe reset the VPN token for the Lisbon office.",
        "summary": "Token reset.",
    },
    {"id": "tox", "document": f"Why is this still broken? {TOXIC_LINES[0]}", "summary": "Rude."},
    {"id": "sec", "document": "My password is hunter2hunter2 for the VPN.", "summary": "VPN."},
    {"id": "ok", "document": "The router arrived after five days.", "summary": "Late."},
]


def _screen(make_config, tmp_path: Path):
    path = write_jsonl(tmp_path / "in.jsonl", [json.dumps(r) for r in RECORDS])
    cfg = make_config(task="summarization", ingest={"inputs": [str(path)]})
    client, store = shared_client(cfg.dask), cfg.open_store()
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    return cfg, store, run_screen(client, store, ingested, cfg.screen)


def test_every_flagged_and_quarantined_record_is_reviewed_masked_with_its_reason(
    make_config, tmp_path: Path
) -> None:
    cfg, store, (screened, report) = _screen(make_config, tmp_path)
    records = review_records(store, screened)
    assert records is not None
    by_id = {r.id: r for r in records}
    assert [r.id for r in records] == ["sec", "tox", "loc"]  # quarantined first
    loc, tox, sec = by_id["loc"], by_id["tox"], by_id["sec"]
    assert (loc.outcome, loc.reason) == ("flagged", "LOCATION in document")
    # a flagged record as training gets it: its flagged place as it is, the name replaced
    assert loc.masked["document"] == "Agent <PERSON> reset the VPN token for the Lisbon office."
    assert [(f.field, f.entity, f.excerpt.value, f.replaced) for f in loc.flags] == [
        ("document", "LOCATION", "Lisbon", False)
    ]
    assert {(c.entity, c.action, c.findings) for c in loc.findings} == {
        ("LOCATION", "flag", 1),
        ("PERSON", "redact", 1),
    }
    assert (tox.outcome, tox.reason) == ("quarantined", "toxicity 1.00 >= 1.0 (abusive term)")
    assert [(c.entity, c.action) for c in tox.findings] == [("TOXICITY", "drop")]
    assert (sec.reason, sec.masked["document"]) == (
        "PASSWORD in document",
        "My password is <PASSWORD> for the VPN.",
    )
    # no replaced or quarantined value in the review table's files (the flagged place is kept
    # in training, so it is shown); they are encrypted at rest as the raw records are
    files = store.table_files(screened, "review")
    assert not [f for f in files if b"Lisbon" in Path(f).read_bytes()]
    raw = json.dumps([read_table(store, f) for f in files])
    assert "Kenji" not in raw and "hunter2hunter2" not in raw and "Lisbon" in raw
    # the kept record's replaced name: counted, and kept with its before and after
    assert [(c.entity, c.action, c.findings) for c in report.changed] == [("PERSON", "redact", 1)]
    changed_sample = kept_changes(store, screened)
    assert changed_sample is not None
    assert [(c.id, c.field, c.before.value, c.after.value) for c in changed_sample] == [
        ("loc", "document", "Kenji Watanabe", "<PERSON>")
    ]
    # the content hash is the kept records' (content and id) only: the review table is beside it
    kept = [r for f in store.table_files(screened, "screened") for r in read_table(store, f)]
    content = MultisetHash()
    for record in kept:
        content.add(identity_hash(record_hash(record), record["id"]))
    assert screened.content_hash == content.hexdigest()
    # masked samples keep their reason: a toxicity drop shows as one
    sample = next(s for s in report.samples if s.id == "tox")
    assert "toxicity 1.00 &gt;= 1.0" in report_markdown(report)
    assert sample.reason == "toxicity 1.00 >= 1.0 (abusive term)"

    page = review_markdown(
        screened, report, records, compare(store, screened, report, "m"), changed_sample
    )
    flagged, quarantined = page.split("### Flagged for review (1)")[1].split("### Quarantined (2)")
    assert "#### `loc` · flagged" in flagged and "**Reason:** LOCATION in document" in flagged
    assert "&lt;PERSON&gt; reset the VPN token for the Lisbon office" in flagged
    assert "**Flagged for:** LOCATION in document: " in flagged and "**Lisbon**" in flagged
    quarantined, changed = quarantined.split("### Kept records the screen changed (1 value")
    assert "**Reason:** toxicity 1.00 &gt;= 1.0" in quarantined and "`sec`" in quarantined
    assert "| PERSON | redact | 1 |" in changed
    assert "before: Agent **Kenji Watanabe** reset" in changed
    assert "after: Agent **&lt;PERSON&gt;** reset" in changed
    assert "### Since the last approved dataset" in page
    assert "Screened with the **personal** profile (`screen.profile`: personal data" in page
    assert "### Screening report (summarization, personal profile)" in page

    # `tunegate review show`: the same review from the store, by content-hash prefix
    store_opt = ["--set", f"store={cfg.store}"]
    shown = CliRunner().invoke(app, ["review", "show", screened.content_hash[:8], *store_opt])
    assert shown.exit_code == 0, shown.output
    for text in (
        "Agent <PERSON> reset the VPN token for the Lisbon office.",
        "LOCATION in document",
        "toxicity 1.00 >= 1.0",
        "My password is <PASSWORD> for the VPN.",
        "Kept records the screen changed",
        "Kenji Watanabe",  # PERSON is in screen.review_shows by default
    ):
        assert text in shown.stdout
    assert "hunter2hunter2" not in shown.stdout

    # ... and by the flow run id its approval record names
    record = make_record(
        screened, report, ApprovalMode.manual, approved=False, reviewer="dana", comment="no"
    ).model_copy(update={"flow_run_id": "5f0c1f5e-9d0a-4d6b-8c55-0a7f1e2b3c4d"})
    save_approval(store, record, b"a key for this test, long enough")
    by_run = CliRunner().invoke(app, ["review", "show", record.flow_run_id, *store_opt])
    assert by_run.exit_code == 0 and by_run.stdout == shown.stdout
    unknown = CliRunner().invoke(app, ["review", "show", "ffff", *store_opt])
    assert unknown.exit_code == 2 and "no screened dataset" in unknown.output


def test_the_form_asks_for_an_explicit_decision_and_links_to_the_review(tmp_path: Path) -> None:
    schema = ApprovalInput.model_json_schema()
    assert set(schema["required"]) == {"decision", "reviewer"}  # no default: no silent reject
    assert schema["properties"]["decision"]["enum"] == ["approve", "reject"]
    assert not ApprovalInput(decision="reject", reviewer="a").approved
    assert ApprovalInput(decision="approve", reviewer="a").approved

    ref, report = _screened(Store(str(tmp_path)), "a", ["r1"], persons=1)
    summary = review_summary(report, None, "0b3c2f4e-0000-4000-8000-000000000000", "qa")
    assert "[Read the full review](" in summary
    assert "/artifacts/artifact/0b3c2f4e-0000-4000-8000-000000000000)" in summary
    assert "**Since the last approval:** this is the first of `qa`." in summary
    assert "Changed in kept records" not in summary  # nothing replaced in kept records
    changed = report.model_copy(
        update={"changed": [EntityCount(entity="PERSON", action="redact", findings=6)]}
    )
    summary = review_summary(changed, None, "0b3c2f4e-0000-4000-8000-000000000000", "qa")
    assert "**Changed in kept records:** PERSON 6." in summary
    assert "\n" not in summary  # one paragraph: the form leaves it about five lines
    # a dataset screened before the review table existed: its masked samples, with reasons
    old = review_markdown(ref, report, review_records(Store(str(tmp_path)), ref), None)
    assert "only the report's masked samples are known" in old and "`r1` (redacted" in old

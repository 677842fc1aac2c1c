"""Raw values do not outlive the screen: the ingest dataset's records are encrypted at rest (or
deleted after approval), and the screen's quarantine keeps masked text only."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from platforms.approvals import ApprovalMode
from platforms.compute import shared_client
from platforms.keys import KeyMismatch
from platforms.manifest import TableRemoved
from platforms.store import Store, read_table
from samples.values import secret_value
from tasks.approve import make_record
from tasks.ingest import retire_raw, run_ingest
from tasks.reuse import reread_needed
from tasks.review_kept import kept_changes
from tasks.screen import run_screen

TOKEN = secret_value(random.Random(3), "github_token")
EMAIL, NAME = "kenji.sato@example.com", "Kenji Sato"
RECORDS = [
    {
        "id": "r1",
        "document": f"Please e-mail {NAME} at {EMAIL} about the refund for order 4471.",
        "summary": f"{NAME} asks about a refund.",
    },
    {
        "id": "r2",
        "document": f"{NAME} pasted the token {TOKEN} into the build config, so the CI job failed.",
        "summary": "A token was pasted into the build config.",
    },
    {
        "id": "r3",
        "document": "The kettle from order 4471 arrived with a cracked lid; a replacement was sent.",
        "summary": "A replacement kettle was sent.",
    },
]
RAW = (EMAIL, NAME, TOKEN)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("raw") / "tickets.jsonl"
    lines = [json.dumps(r) for r in RECORDS] + ['{"id": "r4", "document": "' + EMAIL]  # broken
    path.write_text("\n".join(lines) + "\n")
    return path


def _ingest_and_screen(make_config, inputs: Path, store: str, retention: str, reread=False):
    cfg = make_config(
        task="summarization",
        store=store,
        ingest={"inputs": [str(inputs)], "raw_retention": retention},
    )
    client, opened = shared_client(cfg.dask), cfg.open_store()
    args = (client, opened, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 100)
    ingested = run_ingest(*args, reread=reread)
    return cfg, opened, ingested, run_screen(client, opened, ingested, cfg.screen)


def _bytes(folder: str) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file())


@pytest.mark.slow
def test_ingest_keeps_no_raw_value_readable_and_the_screen_sees_the_same(
    make_config, inputs: Path, tmp_path: Path
) -> None:
    _, _, plain, plain_screened = _ingest_and_screen(
        make_config, inputs, str(tmp_path / "plain"), "keep"
    )
    assert all(v.encode() in _bytes(plain.uri) for v in RAW)  # what `keep` leaves on disk

    cfg, store, ingested, screened = _ingest_and_screen(
        make_config, inputs, str(tmp_path / "store"), "encrypt"
    )
    on_disk = _bytes(ingested.uri)
    assert not [v for v in RAW if v.encode() in on_disk]  # accepted and quarantine tables alike
    assert not [v for v in RAW if v.encode() in _bytes(screened.dataset.uri)]
    # the same records underneath: the same content hashes, so reruns and approvals carry over
    assert ingested.content_hash == plain.content_hash
    assert screened.dataset.content_hash == plain_screened.dataset.content_hash
    assert store.problems(store.read_manifest(ingested.uri)) == []  # `store verify`: ok
    assert run_ingest(
        shared_client(cfg.dask), store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 100
    ).reused
    [accepted] = store.table_files(ingested, "accepted")
    assert {r["id"] for r in read_table(store, accepted)} == {"r1", "r2", "r3"}

    # without the key: a clear error naming the key the file needs
    key_id = store.raw_cipher.key_id
    with pytest.raises(KeyMismatch, match=f"signing key {key_id}.*approval.key_file"):
        read_table(Store(store.uri), accepted)
    with pytest.raises(KeyMismatch, match=key_id):
        read_table(Store(store.uri, signing_key=b"another key of 32 characters...."), accepted)

    # the screen's quarantine: the credential's record, masked (the reviewer sees no raw value)
    [part] = store.table_files(screened.dataset, "quarantine")
    [row] = read_table(store, part)
    assert row["id"] == "r2" and "GITHUB_TOKEN" in row["reason"]
    assert "<GITHUB_TOKEN>" in row["raw"] and not [v for v in RAW if v in row["raw"]]

    # a name the screen replaced is shown to the reviewer (screen.review_shows): an original,
    # which the review reads with the store's key and which is encrypted on disk (above)
    changes = kept_changes(store, screened.dataset) or []
    assert any(c.entity == "PERSON" and c.before.value == NAME for c in changes), changes


def test_delete_after_approval_removes_the_raw_records_and_a_rerun_reads_them_again(
    make_config, inputs: Path, tmp_path: Path
) -> None:
    where = str(tmp_path / "store")
    cfg, store, ingested, screened = _ingest_and_screen(
        make_config, inputs, where, "delete-after-approval"
    )
    assert not [v for v in RAW if v.encode() in _bytes(ingested.uri)]  # encrypted meanwhile
    rejected = make_record(
        screened.dataset, screened.report, ApprovalMode.manual, approved=False, reviewer="ana",
        comment="no",
    )  # fmt: skip
    assert not retire_raw(store, ingested, cfg.ingest, rejected)  # only an approval deletes
    approval = rejected.model_copy(update={"decision": "approved"})
    assert retire_raw(store, ingested, cfg.ingest, approval)

    assert not list(Path(ingested.uri).rglob("*.parquet"))
    manifest = store.read_manifest(ingested.uri)
    assert set(manifest.removed) == {"accepted", "quarantine"}
    assert "delete-after-approval" in manifest.removed["accepted"]
    assert store.problems(manifest) == []  # the store still verifies
    verify = CliRunner().invoke(app, ["store", "verify", "--set", f"store={where}"])
    assert verify.exit_code == 0, verify.output
    with pytest.raises(TableRemoved, match="reads the inputs again"):
        store.table_files(ingested, "accepted")

    # a rerun reuses what it can: the same screen needs no raw record; another screen does
    found = store.find_dataset("ingest", ingested.key)
    assert found is not None and found.content_hash == ingested.content_hash
    assert not reread_needed(store, found, cfg.screen)
    other = make_config(
        task="summarization",
        store=where,
        ingest=cfg.ingest.model_dump(),
        screen={"max_samples": 3},
    )
    assert reread_needed(other.backends().store, found, other.screen)
    _, _, again, rescreened = _ingest_and_screen(
        make_config, inputs, where, "delete-after-approval", reread=True
    )
    assert not again.reused and again.content_hash == ingested.content_hash
    assert rescreened.dataset.content_hash == screened.dataset.content_hash
    assert store.read_manifest(again.uri).removed == {}

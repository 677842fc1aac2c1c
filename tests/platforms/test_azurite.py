"""az:// inputs and an az:// store against a real Azurite Blob endpoint started by the test
(the `azurite` fixture, tests/conftest.py)."""

from __future__ import annotations

import json

import pytest
from azure.storage.blob import BlobServiceClient

from platforms.compute import shared_client
from platforms.store import read_table
from tasks.ingest import run_ingest
from tasks.screen import run_screen
from tasks.split import run_split
from trainer.data import read_split


def _qa(i: int) -> str:
    context = (
        f"Order {i} for Maria Gonzalez (maria{i}@example.com) was delayed by {i % 4 + 1} days."
    )
    answer = f"{i % 4 + 1} days"
    return json.dumps(
        {
            "id": f"o{i}",
            "question": "How long was the delay?",
            "context": context,
            "answers": {"text": [answer], "answer_start": [context.index(answer)]},
        }
    )


@pytest.mark.slow
def test_data_stages_read_and_write_blob_storage(azurite: str, make_config, monkeypatch) -> None:
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite)
    service = BlobServiceClient.from_connection_string(azurite)
    service.create_container("incoming")
    service.create_container("tunegate")
    for name, lines in {
        "tickets/a.jsonl": [_qa(i) for i in range(20)],
        "tickets/b.jsonl": [_qa(i) for i in range(15, 30)] + ["{bad"],
    }.items():
        service.get_blob_client("incoming", name).upload_blob("\n".join(lines).encode())

    cfg = make_config(
        store="az://tunegate/store",
        ingest={"inputs": ["az://incoming/tickets/*.jsonl"]},
        tracking={"uri": "http://mlflow.example:5000"},  # a remote store has no database
    )
    client, store = shared_client(cfg.dask), cfg.open_store()
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    assert ingested.uri.startswith("az://tunegate/store/datasets/ingest/")
    assert ingested.counts["read"] == 36
    assert (
        ingested.counts["accepted"],
        ingested.counts["duplicates"],
        ingested.counts["quarantined"],
    ) == (30, 5, 1)

    screened, report = run_screen(client, store, ingested, cfg.screen)
    rows = [r for f in store.table_files(screened, "screened") for r in read_table(store, f)]
    assert len(rows) == 30 and report.redacted == 30
    assert not any("maria" in r["context"].lower() for r in rows)

    split = run_split(client, store, screened, cfg.split, [])
    assert sum(split.counts[s] for s in ("train", "validation", "test")) == 30
    # evaluation (and the trainer) read the split where the store keeps it, az:// included
    for part in ("train", "validation", "test"):
        records = read_split(split.uri, part, storage_options=store.storage_options)
        assert len(records) == split.counts[part] and all(r["id"] for r in records)
    assert len(read_split(split.uri, "test", 2, store.storage_options)) == min(
        2, split.counts["test"]
    )
    again = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    assert again.reused and again.uri == ingested.uri

    # the raw records on Blob are encrypted (ingest.raw_retention's default), and deleting them
    # after an approval leaves a dataset that still verifies
    container = service.get_container_client("tunegate")
    prefix = ingested.uri.removeprefix("az://tunegate/") + "/"

    def blobs() -> dict[str, bytes]:
        return {
            b.name: container.download_blob(b.name).readall()
            for b in container.list_blobs(name_starts_with=prefix)
        }

    assert not [name for name, data in blobs().items() if b"@example.com" in data]
    assert store.remove_tables(ingested, ["accepted", "quarantine"], "approved")
    assert not [name for name in blobs() if name.endswith(".parquet")]
    assert store.problems(store.read_manifest(ingested.uri)) == []


def test_blob_paths_without_credentials_say_what_to_set(make_config, monkeypatch) -> None:
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)
    cfg = make_config(ingest={"inputs": ["az://incoming/x.jsonl"]})
    with pytest.raises(ValueError, match="AZURE_STORAGE_CONNECTION_STRING"):
        run_ingest(
            shared_client(cfg.dask),
            cfg.open_store(),
            cfg.task,
            cfg.columns,
            cfg.ingest,
            cfg.azure,
            200,
        )

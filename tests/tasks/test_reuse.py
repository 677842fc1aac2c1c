"""What earlier runs already did with the data (tasks/reuse.py): an ingest dataset counts as trained
on only when a registered version's lineage holds it and the training job these settings make of
its split. (reread_needed: tests/tasks/test_raw_retention.py; the flow's "nothing new" on a
split-only run: tests/flows/test_flow.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from platforms.compute import shared_client
from platforms.lineage import Lineage
from tasks.ingest import run_ingest
from tasks.reuse import trained_before
from tasks.train import TrainConfig, job_name_for

SPLIT = "5" * 64


def test_an_ingest_dataset_is_trained_on_when_a_version_holds_it_and_this_job(
    make_config, tmp_path: Path
) -> None:
    inputs = tmp_path / "tickets.jsonl"
    records = [
        {"id": f"t{i}", "document": f"Order {i} arrived late.", "summary": "Late."}
        for i in range(3)
    ]
    inputs.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    cfg = make_config(task="summarization", ingest={"inputs": [str(inputs)]})
    backends = cfg.backends()
    args = (cfg.task, cfg.columns, cfg.ingest, cfg.azure, 100)
    ingested = run_ingest(shared_client(cfg.dask), backends.store, *args)
    made = backends.store.read_manifest(ingested.uri).created_at
    train = TrainConfig()

    def asked(train: TrainConfig) -> str | None:
        return trained_before(
            backends,
            ingested,
            model_name="tickets",
            task="summarization",
            train=train,
            split_only=False,
        )

    assert asked(train) is None  # nothing registered yet
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights.bin").write_bytes(b"w")
    other_data = Lineage(
        datasets={"ingest": "0" * 64, "split": "6" * 64},
        training_job=job_name_for("6" * 64, "summarization", train),
    )
    backends.registry.register("tickets", model, {}, other_data)
    assert asked(train) is None  # another ingest dataset's version

    ours = Lineage(
        datasets={"ingest": ingested.content_hash, "split": SPLIT},
        training_job=job_name_for(SPLIT, "summarization", train),
    )
    backends.registry.register("tickets", model, {}, ours)
    assert asked(train) == made
    assert asked(TrainConfig(epochs=13)) is None  # other settings: another job

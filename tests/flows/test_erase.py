"""Issue 42 item 4: `tunegate erase` on a record of the sample data leaves no copy in any dataset
of the store (raw, encrypted at rest; screened; split; the screen's report), marks the champion
trained on it `needs-retrain` (registry tag and model card), keeps an audit without the value,
and the retrain it starts leaves the record out even though its input still holds it.

The champion is registered from a model folder with the run's lineage, as tests/tasks/
test_model_card.py registers one: no training is needed to be trained on the data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from flows.retrain import retrain
from platforms import tracking
from platforms.approvals import ApprovalRecord
from platforms.lineage import Lineage
from platforms.model_version import NEEDS_RETRAIN
from platforms.store import Store, read_table
from samples.generate import generate_sample, write_sample
from tasks.register import run_register

pytestmark = pytest.mark.slow  # two data-half runs on the session's Prefect API
MODEL = "tunegate-extractive-qa"
runner = CliRunner()


def _all_rows(store: Store) -> list[dict[str, Any]]:
    """Every row of every Parquet file under the store's datasets (listed in a manifest or
    not), decrypted, and every screen report's samples."""
    rows = []
    for uri in store.glob(store.path("datasets", "*", "*", "**", "*.parquet")):
        rows += read_table(store, uri)
    for uri in store.glob(store.path("datasets", "screen", "*", "report.json")):
        rows += json.loads(store.read_text(uri))["samples"]
    return rows


def _holding(rows: list[dict[str, Any]], ids: set[str], value: str) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("id") in ids or value.casefold() in json.dumps(r).casefold()]


def _champion(cfg, summary, inputs) -> None:
    """Register a model folder as the champion, its lineage naming the run's datasets and
    inputs."""
    source = cfg_dir = Path(cfg.store).parent / "model"
    cfg_dir.mkdir()
    (source / "weights.bin").write_bytes(b"weights")
    info = {"task": "extractive-qa", "base_model": "packaged:all-MiniLM-L6-v2"}
    (source / "model_info.json").write_text(json.dumps(info))
    hashes = {s: summary.stages[s].details["content_hash"] for s in ("ingest", "screen", "split")}
    registry = cfg.backends().registry
    lineage = Lineage(datasets=hashes, inputs=inputs)
    run_register(registry, MODEL, source, {"f1": 50.0}, lineage, True)


def test_erase_reaches_every_dataset_the_champion_and_the_retrain(
    prefect_api, make_config, tmp_path: Path
) -> None:
    sample = generate_sample("extractive-qa", 60, seed=3)
    data = tmp_path / "sample.jsonl"
    write_sample(sample, data)
    (tmp_path / "sample.jsonl.datasheet.yaml").write_text("licence: CC0-1.0\nsource: tickets\n")
    cfg = make_config(ingest={"inputs": [str(data)]}, approval={"mode": "auto"})
    state = retrain(cfg, return_state=True)
    assert state.is_completed(), state.message
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    store = cfg.open_store()
    # the datasheet went into the signed approval record, the MLflow run and the registry
    [record_file] = (Path(cfg.store) / "approvals").glob("*/*.json")
    approval = ApprovalRecord.model_validate_json(record_file.read_text())
    assert [i.licence for i in approval.inputs] == ["CC0-1.0"]
    client = tracking.client(tracking.local_tracking_uri(Path(cfg.store)))
    [run] = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert (run.data.params["data.licences"], run.data.params["data.sources"]) == (
        "CC0-1.0",
        "tickets",
    )
    _champion(cfg, state.result(), approval.inputs)
    assert cfg.backends().registry.tags(MODEL, 1)["data.licences"] == "CC0-1.0"

    email = sample.planted_pii["EMAIL_ADDRESS"][0]
    ids = {r["id"] for r in _records(data) if email in json.dumps(r)}
    before = _all_rows(store)
    held = _holding(before, ids, email)
    stages = {Path(m.uri).parent.name for m in store.manifests() if _in(store, m, ids)}
    assert ids and held and stages == {"ingest", "screen", "split"}  # raw, screened, split

    erased = runner.invoke(
        app, ["erase", "--value", email, "--by", "dpo@example.com", "--config", str(config_file)]
    )
    assert erased.exit_code == 0, erased.output

    # no copy left in any dataset; every dataset still verifies (signed, every file hashed)
    after = _all_rows(store)
    assert _holding(after, ids, email) == []
    assert len(before) - len(after) == len(held)  # nothing else was lost
    assert all(store.problems(m) == [] for m in store.manifests())
    # the champion is marked, in the registry and its card
    registry = cfg.backends().registry
    champion = registry.alias(MODEL, "champion")
    assert champion is not None
    [audit_file] = (Path(cfg.store) / "erasures").glob("*.json")
    audit = json.loads(audit_file.read_text())
    assert audit["erasure_id"] in registry.tags(MODEL, champion.version)[NEEDS_RETRAIN]
    card = runner.invoke(app, ["models", "show", MODEL, "--card", "--config", str(config_file)])
    assert card.exit_code == 0 and "**Needs retraining**" in card.output
    # the audit: who, what, when; a hash of the value, never the value
    assert email.casefold() not in audit_file.read_text().casefold()
    assert audit["erased_by"] == "dpo@example.com" and audit["value_hash"]
    assert set(audit["record_ids"]) == ids and audit["models"] == [f"{MODEL}:1"]
    assert {d["stage"] for d in audit["datasets"]} == {"ingest", "screen", "split"}

    # erase one more record by id, and retrain on the inputs (which still hold both) read again
    other = sorted({r["id"] for r in after if r.get("id") and r["id"].startswith("t")})[0]
    again = ["--set", "dask.partition_rows=150"]  # another ingest key: the input is read again
    retrained = runner.invoke(
        app, ["erase", "--id", other, "--retrain", "--config", str(config_file), *again]
    )
    assert retrained.exit_code == 0, retrained.output
    gone = ids | {other}
    assert _holding(_all_rows(store), gone, email) == []  # the new datasets hold neither
    ingests = sorted(
        (m for m in store.manifests() if m.stage == "ingest"), key=lambda m: m.created_at
    )
    assert ingests[-1].counts["erased"] == len(gone)  # read again, and left out
    newest_split = max((m for m in store.manifests() if m.stage == "split"), key=_created)
    assert gone <= set(newest_split.extra["excluded_ids_not_found"])  # asked to leave them out


def _records(path: Path) -> list[dict[str, Any]]:
    """The sample's lines that are JSON objects with an id (it holds broken ones on purpose)."""
    found = []
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            found.append(record)
    return found


def _created(manifest) -> str:
    return manifest.created_at


def _in(store: Store, manifest, ids: set[str]) -> bool:
    return any(
        r.get("id") in ids
        for table, info in manifest.tables.items()
        if table not in manifest.removed
        for name in info.files
        for r in read_table(store, f"{manifest.uri}/{name}")
    )

"""The local registry: MLflow's Model Registry on the store's database; versions, aliases and
their history, lineage, concurrency, killed registrations and tampered files."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from platforms import tracking
from platforms.lineage import Lineage
from platforms.model_version import ModelFilesChanged
from platforms.registry import MlflowRegistry


def _model(tmp: Path, name: str) -> Path:
    folder = tmp / name
    folder.mkdir()
    (folder / "weights.bin").write_bytes(name.encode())
    return folder


def _register(args: tuple[str, str] | tuple[str, str, str]) -> int:
    root, source, *job = args
    lineage = Lineage(training_job=job[0]) if job else Lineage()
    return (
        MlflowRegistry.local(Path(root)).register("m", Path(source), {"f1": 1.0}, lineage).version
    )


def test_versions_aliases_and_lineage_are_mlflows_own(tmp_path: Path) -> None:
    store = tmp_path / "store"
    registry = MlflowRegistry.local(store)
    first = registry.register("qa", _model(tmp_path, "a"), {"f1": 50.0}, Lineage(flow_run_id="r1"))
    second = registry.register(
        "qa", _model(tmp_path, "b"), {"f1": 55.0}, Lineage(flow_run_id="r2", training_job="j2")
    )
    assert (first.version, second.version) == (1, 2)
    registry.set_alias("qa", "champion", 1)
    registry.set_alias("qa", "challenger", 2)
    assert registry.alias("qa", "champion").lineage == Lineage(flow_run_id="r1")
    assert Path(registry.get("qa", 2).path, "weights.bin").read_bytes() == b"b"
    with pytest.raises(ValueError, match="alias must be one of"):
        registry.set_alias("qa", "production", 1)
    with pytest.raises(KeyError):
        registry.set_alias("qa", "champion", 9)

    # What MLflow's own client (and its UI) sees: the model, its aliases, tags and description
    client = tracking.client(tracking.local_tracking_uri(store))
    model = client.get_registered_model("qa")
    assert model.aliases == {"champion": 1, "challenger": 2}
    champion = client.get_model_version_by_alias("qa", "champion")
    assert champion.tags["flow_run_id"] == "r1" and champion.tags["metric.f1"] == "50.0"
    assert "job `j2`" in client.get_model_version("qa", "2").description
    assert Path(str(champion.source).removeprefix("file://"), "weights.bin").read_bytes() == b"a"
    assert not (store / "models").exists()  # no hand-written index, version folders or locks


def test_rollback_history_survives_a_new_client(tmp_path: Path) -> None:
    registry = MlflowRegistry.local(tmp_path / "store")
    for name in ("a", "b", "c"):
        registry.register("qa", _model(tmp_path, name), {}, Lineage(flow_run_id=name))
    registry.set_alias("qa", "champion", 1)
    registry.set_alias("qa", "champion", 3)
    registry.set_alias("qa", "champion", 2)
    again = MlflowRegistry.local(tmp_path / "store")
    assert again.alias("qa", "champion").version == 2
    assert again.previous("qa", "champion").version == 3
    assert again.previous("qa", "challenger") is None


@pytest.mark.slow
def test_concurrent_registrations_get_distinct_versions(tmp_path: Path) -> None:
    sources = [str(_model(tmp_path, f"s{i}")) for i in range(4)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        versions = pool.map(_register, [(str(tmp_path / "store"), s) for s in sources])
    assert sorted(versions) == [1, 2, 3, 4]
    registry = MlflowRegistry.local(tmp_path / "store")
    files = {Path(v.path, "weights.bin").read_bytes() for v in registry.versions("m")}
    assert files == {f"s{i}".encode() for i in range(4)}  # no version over another's files


@pytest.mark.slow
def test_one_training_job_is_registered_once_even_by_concurrent_runs(tmp_path: Path) -> None:
    source, root = str(_model(tmp_path, "job-output")), str(tmp_path / "store")
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        versions = pool.map(_register, [(root, source, "train-abc")] * 4)
    assert versions == [1] * 4  # four runs of the same job: one version, returned to each
    other = _register((root, source, "train-def"))  # another job is another version
    registry = MlflowRegistry.local(Path(root))
    assert [v.version for v in registry.versions("m")] == [1, other]
    assert [v.lineage.training_job for v in registry.versions("m")] == ["train-abc", "train-def"]


def test_a_failed_registration_leaves_no_version(tmp_path: Path, monkeypatch) -> None:
    registry = MlflowRegistry.local(tmp_path / "store")
    registry.register("qa", _model(tmp_path, "a"), {}, Lineage())

    def power_cut(*args: object) -> None:
        raise OSError("power cut")

    monkeypatch.setattr("platforms.registry.upload", power_cut)
    with pytest.raises(OSError, match="power cut"):
        registry.register("qa", _model(tmp_path, "b"), {}, Lineage())
    monkeypatch.undo()
    assert [v.version for v in registry.versions("qa")] == [1]
    client = tracking.client(registry.uri)
    assert [int(v.version) for v in client.search_model_versions("name = 'qa'")] == [1]
    nxt = registry.register("qa", _model(tmp_path, "c"), {}, Lineage())
    assert Path(nxt.path, "weights.bin").read_bytes() == b"c"
    assert Path(registry.get("qa", 1).path, "weights.bin").read_bytes() == b"a"


KILLED = """
import os, sys
from pathlib import Path
import platforms.registry as r
from platforms.lineage import Lineage
def killed(*args):
    os._exit(9)  # SIGKILL-like: no cleanup runs
r.upload = killed
r.MlflowRegistry.local(Path(sys.argv[1])).register("qa", Path(sys.argv[2]), {}, Lineage())
"""


@pytest.mark.slow
def test_a_killed_registration_is_invisible_and_cleaned_by_the_next(tmp_path: Path) -> None:
    store = tmp_path / "store"
    registry = MlflowRegistry.local(store)
    registry.register("qa", _model(tmp_path, "a"), {}, Lineage(training_job="j1"))
    root = Path(__file__).resolve().parents[2]
    died = subprocess.run(
        [sys.executable, "-c", KILLED, str(store), str(_model(tmp_path, "b"))],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=False,
    )
    assert died.returncode == 9
    client = tracking.client(registry.uri)
    assert len(client.search_model_versions("name = 'qa'")) == 2  # half registered...
    assert [v.version for v in registry.versions("qa")] == [1]  # ...and not visible
    third = registry.register("qa", _model(tmp_path, "c"), {}, Lineage(training_job="j3"))
    assert [v.version for v in registry.versions("qa")] == [1, third.version]
    assert len(client.search_model_versions("name = 'qa'")) == 2  # the dead one deleted


def test_a_version_whose_files_or_record_changed_is_refused_naming_them(tmp_path: Path) -> None:
    key = b"k" * 32
    source = tmp_path / "model"
    source.mkdir()
    (source / "adapter_model.safetensors").write_bytes(bytes(range(256)) * 8)
    (source / "serving.json").write_text('{"runtime": "onnx-int8"}')
    registry = MlflowRegistry.local(tmp_path / "store", signing_key=key)
    version = registry.register("qa", source, {"f1": 61.0}, Lineage())
    folder = Path(version.path)
    assert registry.download(version) == folder  # as registered
    assert set(version.files) == {"adapter_model.safetensors", "serving.json"}

    weights = folder / "adapter_model.safetensors"
    original = weights.read_bytes()
    weights.write_bytes(bytes([original[0] ^ 1]) + original[1:])  # one flipped bit
    with pytest.raises(ModelFilesChanged, match=r"adapter_model\.safetensors changed"):
        registry.download(registry.get("qa", 1))
    weights.write_bytes(original)

    (folder / "serving.json").unlink()  # would silently serve torch
    with pytest.raises(ModelFilesChanged, match=r"serving\.json is missing"):
        registry.download(registry.get("qa", 1))
    (folder / "serving.json").write_text('{"runtime": "onnx-int8"}')
    registry.download(registry.get("qa", 1))  # restored: served again

    # Better metrics written into the record: the registry's database holds its hash
    record_file = folder / "version.json"
    kept = record_file.read_text()
    record = json.loads(kept)
    record["metrics"]["f1"] = 99.99
    record_file.write_text(json.dumps(record))
    with pytest.raises(ModelFilesChanged, match=r"version\.json was edited"):
        registry.get("qa", 1)
    record_file.write_text(kept)

    # ...and the hash in the database made to agree: the signature fails
    edited = json.dumps(record)
    record_file.write_text(edited)
    client = tracking.client(registry.uri)
    client.set_model_version_tag("qa", "1", "tunegate.record_sha256", _sha256(edited))
    forged = registry.get("qa", 1)
    assert forged.metrics["f1"] == 99.99
    with pytest.raises(ModelFilesChanged, match="signature does not hold"):
        registry.download(forged)


def _sha256(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def test_a_registered_version_links_to_its_tracking_run(tmp_path: Path) -> None:
    store = tmp_path / "store"
    client = tracking.client(tracking.ensure_local_database(store))
    experiment = tracking.experiment_id(client, "qa", tracking.local_artifact_root(store))
    run = client.create_run(experiment, run_name="retrain-qa")
    registry = MlflowRegistry.local(store)
    lineage = Lineage(tracking_run_id=run.info.run_id)
    version = registry.register("qa", _model(tmp_path, "a"), {}, lineage)
    assert client.get_model_version("qa", str(version.version)).run_id == run.info.run_id
    unknown = registry.register("qa", _model(tmp_path, "b"), {}, Lineage(tracking_run_id="nope"))
    assert client.get_model_version("qa", str(unknown.version)).run_id in (None, "")


# A report as a release before typed lineage stored it: a dict, its gate without a verdict, and
# none of the fields added since (serving, examples).
OLDER_REPORT = {
    "task": "extractive-qa",
    "primary_metric": "f1",
    "test_records": 60,
    "base": {"f1": 6.1},
    "candidate": {"f1": 58.8},
    "champion": None,
    "champion_version": None,
    "interval": [-1.5, 8.2],
    "pii_leaks": 0,
    "gate": {
        "passed": True,
        "reasons": [],
        "checks": [{"name": "f1 >= 50", "value": 58.8, "required": 50.0, "passed": True}],
    },
    "samples": [],
}


def _as_an_older_release_wrote_it(
    registry: MlflowRegistry, key: bytes, number: int, evaluation: dict
) -> None:
    """Version `number`'s record rewritten with `evaluation` as its lineage's report, signed with
    `key` and hashed into the registry's database, as the release that registered it did."""
    import hashlib
    import hmac

    record_file = Path(registry.get("qa", number).path) / "version.json"
    record = json.loads(record_file.read_text())
    record["lineage"]["evaluation"] = evaluation
    content = {k: v for k, v in record.items() if k not in ("path", "signature")}
    signed = json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
    record["signature"] = hmac.new(key, signed, hashlib.sha256).hexdigest()
    text = json.dumps(record)
    record_file.write_text(text)
    client = tracking.client(registry.uri)
    client.set_model_version_tag("qa", str(number), "tunegate.record_sha256", _sha256(text))


def test_a_version_registered_with_a_dict_report_reads_as_an_eval_report_and_verifies(
    tmp_path: Path,
) -> None:
    from platforms.evaluation import EvalReport

    key = b"k" * 32
    registry = MlflowRegistry.local(tmp_path / "store", signing_key=key)
    for name in ("a", "b"):
        registry.register("qa", _model(tmp_path, name), {"f1": 58.8}, Lineage(training_job=name))
    _as_an_older_release_wrote_it(registry, key, 1, OLDER_REPORT)
    _as_an_older_release_wrote_it(registry, key, 2, {"f1": 58.8})  # a shape no longer known

    older = registry.get("qa", 1)
    report = older.lineage.evaluation
    assert isinstance(report, EvalReport)
    assert (report.candidate, report.interval, report.gate.verdict) == (
        {"f1": 58.8},
        (-1.5, 8.2),
        "passed",  # from its `passed`, as before verdicts
    )
    assert registry.problems(older) == []  # its signature holds: written back as it was stored
    assert registry.download(older) == Path(older.path)
    assert older.lineage.model_dump(mode="json")["evaluation"] == OLDER_REPORT

    unknown = registry.get("qa", 2)
    assert unknown.lineage.evaluation is None  # read without its report, never refused
    assert registry.problems(unknown) == []

    # this release's own: the typed report, stored without its loss curve, read back equal
    typed = report.model_copy(update={"loss_curve": [{"step": 1.0, "loss": 2.0}]})
    third = registry.register(
        "qa", _model(tmp_path, "c"), {"f1": 58.8}, Lineage(training_job="c", evaluation=typed)
    )
    again = registry.get("qa", third.version)
    assert again.lineage.evaluation == report.model_copy(update={"loss_curve": []})
    assert "loss_curve" not in again.lineage.model_dump(mode="json")["evaluation"]
    assert registry.problems(again) == []


def test_an_alias_moved_or_deleted_in_mlflow_is_seen_and_its_history_kept(
    tmp_path: Path,
) -> None:
    from platforms.model_version import alias_notice

    store = tmp_path / "store"
    registry = MlflowRegistry.local(store)
    for name in ("a", "b", "c"):
        registry.register("qa", _model(tmp_path, name), {}, Lineage(flow_run_id=name))
    registry.set_alias("qa", "champion", 1)
    registry.set_alias("qa", "champion", 2)
    assert alias_notice(registry, "qa") is None  # where tunegate left it
    client = tracking.client(tracking.local_tracking_uri(store))
    tags = client.get_model_version("qa", "1").tags
    assert "alias.champion.at" in tags and "alias.champion.until" in tags  # the history, in MLflow
    assert "alias.champion.until" not in client.get_model_version("qa", "2").tags

    client.set_registered_model_alias("qa", "champion", "3")  # the MLflow UI's alias editor
    moved = alias_notice(registry, "qa")
    assert moved is not None and moved.startswith(
        "qa@champion is version 3, moved outside tunegate (the MLflow UI or client); "
        "tunegate made version 2 champion at "
    )
    assert "`tunegate models promote qa 2 --alias champion` restores it" in moved

    client.delete_registered_model_alias("qa", "champion")
    removed = alias_notice(registry, "qa")
    assert removed is not None and removed.startswith(
        "qa@champion was removed outside tunegate (the MLflow UI or client); "
        "tunegate made version 2 champion"
    )
    assert registry.recorded_alias("qa", "champion").version == 2
    assert registry.previous("qa", "champion").version == 1  # what a rollback returns to

    registry.set_alias("qa", "champion", 2)  # set again through tunegate: nothing to say
    assert alias_notice(registry, "qa") is None
    assert registry.previous("qa", "champion").version == 1

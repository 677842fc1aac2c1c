"""The local registry: versions, aliases, atomic index under concurrency and crashes."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from platforms.lineage import Lineage
from platforms.registry import LocalRegistry


def _model(tmp: Path, name: str) -> Path:
    folder = tmp / name
    folder.mkdir()
    (folder / "weights.bin").write_bytes(name.encode())
    return folder


def _register(args: tuple[str, str] | tuple[str, str, str]) -> int:
    root, source, *job = args
    lineage = Lineage(training_job=job[0]) if job else Lineage()
    return LocalRegistry(Path(root)).register("m", Path(source), {"f1": 1.0}, lineage).version


def test_versions_aliases_and_lineage(tmp_path: Path) -> None:
    registry = LocalRegistry(tmp_path / "store")
    first = registry.register("qa", _model(tmp_path, "a"), {"f1": 50.0}, Lineage(flow_run_id="r1"))
    second = registry.register("qa", _model(tmp_path, "b"), {"f1": 55.0}, Lineage(flow_run_id="r2"))
    assert (first.version, second.version) == (1, 2)
    registry.set_alias("qa", "champion", 1)
    registry.set_alias("qa", "challenger", 2)
    assert registry.alias("qa", "champion").lineage == Lineage(flow_run_id="r1")
    assert Path(registry.get("qa", 2).path, "weights.bin").read_bytes() == b"b"
    with pytest.raises(ValueError, match="alias must be one of"):
        registry.set_alias("qa", "production", 1)
    with pytest.raises(KeyError):
        registry.set_alias("qa", "champion", 9)


def test_concurrent_registrations_get_distinct_versions(tmp_path: Path) -> None:
    sources = [str(_model(tmp_path, f"s{i}")) for i in range(6)]
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        versions = pool.map(_register, [(str(tmp_path / "store"), s) for s in sources])
    assert sorted(versions) == [1, 2, 3, 4, 5, 6]
    index = json.loads((tmp_path / "store" / "models" / "index.json").read_text())
    assert sorted(index["m"]["versions"], key=int) == [str(v) for v in range(1, 7)]


def test_one_training_job_is_registered_once_even_by_concurrent_runs(tmp_path: Path) -> None:
    source, root = str(_model(tmp_path, "job-output")), str(tmp_path / "store")
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        versions = pool.map(_register, [(root, source, "train-abc")] * 6)
    assert versions == [1] * 6  # six runs of the same job: one version, returned to each
    assert _register((root, source, "train-def")) == 2  # another job is another version
    assert [v.version for v in LocalRegistry(Path(root)).versions("m")] == [1, 2]


def test_a_crash_between_write_and_rename_leaves_the_index_consistent(
    tmp_path: Path, monkeypatch
) -> None:
    registry = LocalRegistry(tmp_path / "store")
    registry.register("qa", _model(tmp_path, "a"), {}, Lineage())
    before = registry.index_path.read_text()

    real_replace = os.replace

    def crash_on_index(src: object, dst: object) -> None:
        if Path(str(dst)) == registry.index_path:
            raise OSError("power cut")
        real_replace(src, dst)

    monkeypatch.setattr("platforms.registry.os.replace", crash_on_index)
    with pytest.raises(OSError, match="power cut"):
        registry.register("qa", _model(tmp_path, "b"), {}, Lineage())
    monkeypatch.undo()
    assert registry.index_path.read_text() == before
    assert [v.version for v in registry.versions("qa")] == [1]
    # The copied version is there but not indexed; the next registration indexes it (the folder
    # carries its own record) and never overwrites its folder.
    assert registry.register("qa", _model(tmp_path, "c"), {}, Lineage()).version == 3
    assert Path(registry.get("qa", 3).path, "weights.bin").read_bytes() == b"c"
    assert (registry.root / "qa" / "2" / "weights.bin").read_bytes() == b"b"
    assert [v.version for v in registry.versions("qa")] == [1, 2, 3]


def test_a_lost_index_loses_no_version_alias_or_history(tmp_path: Path) -> None:
    registry = LocalRegistry(tmp_path / "store")
    for name in ("a", "b", "c"):
        registry.register("qa", _model(tmp_path, name), {"f1": 1.0}, Lineage(flow_run_id=name))
    registry.set_alias("qa", "champion", 1)
    registry.set_alias("qa", "champion", 3)
    registry.set_alias("qa", "challenger", 2)
    before = json.loads(registry.index_path.read_text())
    registry.index_path.unlink()

    assert registry.alias("qa", "champion").version == 3  # rebuilt on read
    assert registry.previous("qa", "champion").version == 1
    assert registry.aliases("qa") == {"champion": 3, "challenger": 2}
    assert [v.lineage.flow_run_id for v in registry.versions("qa")] == ["a", "b", "c"]
    nxt = registry.register("qa", _model(tmp_path, "d"), {}, Lineage())
    assert nxt.version == 4  # not a second version 1 over the first one's folder
    assert Path(registry.get("qa", 1).path, "weights.bin").read_bytes() == b"a"
    after = json.loads(registry.index_path.read_text())
    assert after["qa"]["history"] == before["qa"]["history"]


def test_a_corrupt_index_names_the_file_and_repair_rebuilds_it(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    registry = LocalRegistry(tmp_path / "store")
    registry.register("qa", _model(tmp_path, "a"), {}, Lineage())
    registry.set_alias("qa", "champion", 1)
    registry.index_path.write_text("{garbage")
    with pytest.raises(ValueError, match=r"index\.json is corrupt.*tunegate models repair"):
        registry.alias("qa", "champion")
    store = ["--set", f"store={tmp_path / 'store'}"]
    listed = CliRunner().invoke(app, ["models", "list", *store])
    assert listed.exit_code == 2 and "models repair" in listed.output
    assert "Traceback" not in listed.output
    repaired = CliRunner().invoke(app, ["models", "repair", *store])
    assert repaired.exit_code == 0, repaired.output
    assert "qa: versions 1; aliases @champion = 1" in repaired.output
    assert registry.alias("qa", "champion").version == 1


def test_versions_registered_before_version_records_are_kept_by_repair(tmp_path: Path) -> None:
    registry = LocalRegistry(tmp_path / "store")
    registry.register("qa", _model(tmp_path, "a"), {"f1": 9.0}, Lineage())
    registry.set_alias("qa", "champion", 1)
    (registry.root / "qa" / "1" / "version.json").unlink()  # as an older tunegate wrote it
    (registry.root / "qa" / "aliases.jsonl").unlink()
    registry.repair()
    assert registry.get("qa", 1).metrics == {"f1": 9.0}
    assert (registry.root / "qa" / "1" / "version.json").exists()
    assert registry.aliases("qa") == {"champion": 1}


def test_a_version_whose_files_or_record_changed_is_refused_naming_them(tmp_path: Path) -> None:
    import json

    from platforms.registry import ModelFilesChanged

    key = b"k" * 32
    source = tmp_path / "model"
    source.mkdir()
    (source / "adapter_model.safetensors").write_bytes(bytes(range(256)) * 8)
    (source / "serving.json").write_text('{"runtime": "onnx-int8"}')
    registry = LocalRegistry(tmp_path / "store", signing_key=key)
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

    # Better metrics written into the record, and the index made to agree: the signature fails
    record = json.loads((folder / "version.json").read_text())
    record["metrics"]["f1"] = 99.99
    (folder / "version.json").write_text(json.dumps(record))
    with pytest.raises(ModelFilesChanged, match=r"version\.json was edited"):
        registry.download(registry.get("qa", 1))
    (registry.index_path).unlink()  # rebuilt from the edited record
    edited = registry.get("qa", 1)
    assert edited.metrics["f1"] == 99.99
    with pytest.raises(ModelFilesChanged, match="signature does not hold"):
        registry.download(edited)


def test_a_stale_index_or_a_killed_registration_leaves_no_duplicate_and_no_scratch(
    tmp_path: Path,
) -> None:
    source = tmp_path / "model"
    source.mkdir()
    (source / "weights.bin").write_bytes(b"w")
    registry = LocalRegistry(tmp_path / "store")
    registry.register("qa", source, {}, Lineage(training_job="train-1"))
    before = registry.index_path.read_text()
    registry.register("qa", source, {}, Lineage(training_job="train-2"))
    registry.index_path.write_text(before)  # an index that missed version 2 (a stale cache)
    dead = registry.root / "qa" / ".tmp-killed1"  # a registration killed while copying
    dead.mkdir()

    again = registry.register("qa", source, {}, Lineage(training_job="train-2"))
    assert again.version == 2  # the job's version, not a third
    assert [v.version for v in registry.versions("qa")] == [1, 2]
    assert not list((registry.root / "qa").glob(".tmp-*"))

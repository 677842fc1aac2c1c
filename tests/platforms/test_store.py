"""The store: datasets appear whole or not at all; hashes do not depend on partitioning."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from platforms.compute import shared_client
from platforms.hashing import MultisetHash, sha256_text
from platforms.manifest import table_info
from platforms.store import Store, write_table
from tasks.data_stage import Contents, DatasetBuild, stage_dataset
from tasks.ingest import run_ingest
from tasks.screen import run_screen
from tests.conftest import DASK, write_jsonl

SCHEMA = pa.schema([("id", pa.string())])


def test_multiset_hash_ignores_order_and_partitioning() -> None:
    hashes = [sha256_text(str(i)) for i in range(10)]
    whole, left, right = MultisetHash(), MultisetHash(), MultisetHash()
    for h in hashes:
        whole.add(h)
    for h in reversed(hashes[:4]):
        left.add(h)
    for h in hashes[4:]:
        right.add(h)
    left.merge(right)
    assert left.hexdigest() == whole.hexdigest()
    right.add(hashes[0])
    assert right.hexdigest() != whole.hexdigest()


def test_a_dataset_is_invisible_until_committed(tmp_path: Path) -> None:
    store = Store(str(tmp_path))
    writer = store.begin_dataset("ingest", "k1")
    write_table(store, writer.part_uri("accepted", 0), [{"id": "a"}], SCHEMA)
    assert store.find_dataset("ingest", "k1") is None
    ref = writer.commit(
        task="chat",
        content_hash="c",
        parent_hashes=[],
        config_hash="x",
        counts={"accepted": 1},
        tables={"accepted": table_info(1, ["accepted/part-00000.parquet"], SCHEMA)},
    )
    found = store.find_dataset("ingest", "k1")
    assert found is not None and found.uri == ref.uri and found.reused
    assert store.table_files(found, "accepted") == [f"{ref.uri}/accepted/part-00000.parquet"]
    aborted = store.begin_dataset("ingest", "k2")
    aborted.abort()
    assert sorted(p.name for p in (tmp_path / "datasets" / "ingest").iterdir()) == ["k1"]


def _write_part(index: int, *, work_uri: str, store_uri: str, store_options: dict) -> str:
    name = f"accepted/part-{index:05d}.parquet"
    write_table(Store(store_uri, store_options), f"{work_uri}/{name}", [{"id": str(index)}], SCHEMA)
    return name


def test_a_stage_dataset_is_built_once_with_its_parents_or_not_at_all(tmp_path: Path) -> None:
    client, store = shared_client(DASK), Store(str(tmp_path))
    builds = []

    def build(dataset: DatasetBuild) -> Contents:
        builds.append(dataset.writer.work_uri)
        files = dataset.map(_write_part, [0, 1], description="test")  # on the workers
        return Contents("c", {"accepted": 2}, {"accepted": table_info(2, files, SCHEMA)})

    made = stage_dataset(
        client, store, "ingest", "k1", task="chat", parent_hashes=["p1", "p2"], config_hash="x",
        build=build,
    )  # fmt: skip
    assert not made.reused and made.content_hash == "c" and made.counts == {"accepted": 2}
    manifest = store.read_manifest(made.uri)
    assert (manifest.parent_hashes, manifest.config_hash, manifest.task) == (
        ["p1", "p2"],
        "x",
        "chat",
    )
    assert store.table_files(made, "accepted") == [
        f"{made.uri}/accepted/part-00000.parquet",
        f"{made.uri}/accepted/part-00001.parquet",
    ]
    again = stage_dataset(
        client, store, "ingest", "k1", task="chat", parent_hashes=["p1", "p2"], config_hash="x",
        build=build,
    )  # fmt: skip
    assert again.reused and again.uri == made.uri and len(builds) == 1  # reused, not rebuilt

    def failing(dataset: DatasetBuild) -> Contents:
        dataset.map(_write_part, [0], description="test")
        raise RuntimeError("a partition was lost")

    with pytest.raises(RuntimeError, match="a partition was lost"):
        stage_dataset(
            client, store, "ingest", "k2", task="chat", parent_hashes=[], config_hash="x",
            build=failing,
        )  # fmt: skip
    assert store.find_dataset("ingest", "k2") is None
    assert sorted(p.name for p in (tmp_path / "datasets" / "ingest").iterdir()) == ["k1"]


def test_a_failing_stage_leaves_earlier_outputs_intact(make_config, tmp_path: Path) -> None:
    context = "The router from order 77 arrived after 5 days."
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            json.dumps(
                {
                    "id": "a",
                    "question": "How long?",
                    "context": context,
                    "answers": {"text": ["5 days"], "answer_start": [context.index("5 days")]},
                }
            )
        ],
    )
    cfg = make_config(ingest={"inputs": [str(path)]})
    client, store = shared_client(cfg.dask), cfg.open_store()
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 100)
    manifest_before = Path(ingested.uri, "manifest.json").read_text()
    # Simulate a lost partition: screening it fails on the worker.
    [part] = store.table_files(ingested, "accepted")
    Path(part).rename(Path(part).with_suffix(".moved"))
    with pytest.raises(FileNotFoundError):
        run_screen(client, store, ingested, cfg.screen)
    screen_dir = Path(cfg.store) / "datasets" / "screen"
    assert not screen_dir.exists() or not any(screen_dir.iterdir())
    assert Path(ingested.uri, "manifest.json").read_text() == manifest_before


def test_raw_and_quarantined_data_are_private_to_their_owner(make_config, tmp_path: Path) -> None:
    import os
    import stat

    previous = os.umask(0o022)  # a usual login umask: files 0644, folders 0755
    try:
        data = write_jsonl(
            tmp_path / "in.jsonl",
            [
                json.dumps({"id": "a", "question": "Who?", "context": "Ana wrote it.",
                            "answers": {"text": ["Ana"], "answer_start": [0]}}),
                '{"id": "b", "context": "password: hunter2hunter2"}',
            ],
        )  # fmt: skip
        cfg = make_config(ingest={"inputs": [str(data)]})
        client, store = shared_client(cfg.dask), cfg.open_store()
        ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
        run_screen(client, store, ingested, cfg.screen)
    finally:
        os.umask(previous)
    root = Path(cfg.store)
    entries = [root, *root.rglob("*")]
    assert any(p.name.endswith(".parquet") and "quarantine" in str(p) for p in entries)
    for path in entries:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path.relative_to(root.parent)} is {oct(mode)}"


def test_scratch_folders_of_dead_writers_are_removed_live_ones_kept(tmp_path: Path) -> None:
    import subprocess
    import sys

    store = Store(str(tmp_path / "store"))
    live = store.begin_dataset("ingest", "a" * 64)  # this process: alive
    killed = store.begin_dataset("ingest", "b" * 64)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    owner = Path(killed.work_uri, ".writer.json")
    owner.write_text(json.dumps({"host": json.loads(owner.read_text())["host"],
                                 "pid": int(gone.stdout)}))  # fmt: skip
    stage_dir = Path(live.work_uri).parent
    assert len(list(stage_dir.glob(".tmp-*"))) == 2

    store.begin_dataset("ingest", "c" * 64)  # the next writer clears up after the dead one
    scratch = {p.name for p in stage_dir.glob(".tmp-*")}
    assert Path(live.work_uri).name in scratch and Path(killed.work_uri).name not in scratch
    live.write_json("x.json", {})
    ref = live.commit(
        task="extractive-qa", content_hash="h", parent_hashes=[], config_hash="c",
        counts={}, tables={},
    )  # fmt: skip
    assert sorted(p.name for p in Path(ref.uri).iterdir()) == ["manifest.json", "x.json"]


def test_a_reused_dataset_whose_file_changed_stops_the_stage_naming_it(
    make_config, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from cli.main import app
    from platforms.manifest import DatasetCorrupt
    from platforms.store import read_table
    from tasks.split import run_split
    from tests.tickets import qa_tickets

    cfg = make_config(ingest={"inputs": [str(qa_tickets(tmp_path))]})
    client, store = shared_client(cfg.dask), cfg.open_store()
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    screened = run_screen(client, store, ingested, cfg.screen).dataset
    manifest = store.read_manifest(screened.uri)
    assert {"report.json", *manifest.tables["screened"].files} <= set(manifest.files)
    assert run_screen(client, store, ingested, cfg.screen).dataset.reused  # intact: reused

    # An e-mail written back into a screened file, keeping everything else
    [part] = store.table_files(screened, "screened")
    rows = read_table(store, part)
    rows[0]["context"] += " Write to kenji@example.com."
    pq.write_table(pq.read_table(part).from_pylist(rows, schema=pq.read_schema(part)), part)
    with pytest.raises(DatasetCorrupt, match=r"screened/part-00000\.parquet changed"):
        run_screen(client, store, ingested, cfg.screen)
    with pytest.raises(DatasetCorrupt, match=screened.uri):
        run_split(client, store, store.dataset_at(screened.uri), cfg.split, [])
    verify = CliRunner().invoke(app, ["store", "verify", "--set", f"store={cfg.store}"])
    assert verify.exit_code == 1, verify.output
    assert "1 of 2 datasets do not match" in verify.output

    Path(part).write_bytes(Path(part).read_bytes()[:100])  # truncated
    with pytest.raises(DatasetCorrupt, match="changed after it was written"):
        store.dataset_at(screened.uri)
    Path(part).unlink()
    with pytest.raises(DatasetCorrupt, match="is missing"):
        store.dataset_at(screened.uri)


def _commit_one(store: Store, key: str, rows: list[dict]) -> str:
    writer = store.begin_dataset("screen", key)
    write_table(store, writer.part_uri("screened", 0), rows, SCHEMA)
    return writer.commit(
        task="chat",
        content_hash="c",
        parent_hashes=[],
        config_hash="x",
        counts={"screened": len(rows)},
        tables={"screened": table_info(len(rows), ["screened/part-00000.parquet"], SCHEMA)},
    ).uri


def test_a_file_re_hashed_into_its_manifest_is_caught_and_a_moved_store_verifies_itself(
    make_config, tmp_path: Path
) -> None:
    import shutil

    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from cli.main import app
    from platforms.manifest import DatasetCorrupt

    cfg = make_config()
    store = cfg.open_store()  # signs with the approval key, which lives outside the store
    uri = _commit_one(store, "k" * 64, [{"id": "a"}])
    kept = json.loads((Path(uri) / "manifest.json").read_text())
    assert kept["uri"] == f"datasets/screen/{'k' * 64}" and kept["signature"]

    # A copied store (another folder, another machine's path) is itself, and verifies
    moved = tmp_path / "moved"
    shutil.copytree(cfg.store, moved)
    copy = make_config(store=str(moved)).open_store()
    found = copy.find_dataset("screen", "k" * 64)
    assert found is not None and found.uri == str(moved / "datasets" / "screen" / ("k" * 64))
    assert CliRunner().invoke(app, ["store", "verify", "--set", f"store={moved}"]).exit_code == 0

    # A row put back into the screened file and its new sha256 written into the manifest: the
    # files match the manifest, but the manifest no longer matches its signature
    part = Path(uri) / "screened" / "part-00000.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": "a"}, {"id": "kenji@example.com"}], SCHEMA), part)
    kept["files"]["screened/part-00000.parquet"] = store.file_sha256(str(part))
    (Path(uri) / "manifest.json").write_text(json.dumps(kept))
    with pytest.raises(DatasetCorrupt, match="signature differs"):
        store.find_dataset("screen", "k" * 64)
    verify = CliRunner().invoke(app, ["store", "verify", "--set", f"store={cfg.store}"])
    assert verify.exit_code == 1 and "signature differs" in verify.output, verify.output

    # Another dataset's (signed) manifest and files copied over this one's folder
    other = _commit_one(store, "o" * 64, [{"id": "b"}])
    shutil.rmtree(uri)
    shutil.copytree(other, uri)
    with pytest.raises(DatasetCorrupt, match="copied here"):
        store.find_dataset("screen", "k" * 64)

    # A manifest written without the key is not taken as verified by a store that has one
    unsigned = _commit_one(Store(str(tmp_path / "plain")), "u" * 64, [{"id": "c"}])
    with pytest.raises(DatasetCorrupt, match="not signed"):
        make_config(store=str(tmp_path / "plain")).open_store().dataset_at(unsigned)
    # ... until a person vouches for it: `tunegate store sign` signs what still matches
    signing = CliRunner().invoke(app, ["store", "sign", "--set", f"store={tmp_path / 'plain'}"])
    assert signing.exit_code == 0 and "1 of 1 datasets signed now" in signing.output
    assert make_config(store=str(tmp_path / "plain")).open_store().dataset_at(unsigned).reused

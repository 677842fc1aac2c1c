"""An erasure rewrites a finished dataset as a new signed version at its place (new files, raw
ones encrypted again, no old file left), and one that stopped half way is finished by the next."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from platforms.dataset_rewrite import JOURNAL, finish_pending, rewrite_without
from platforms.keys import is_encrypted
from platforms.store import Store, read_table, write_table

SCHEMA = pa.schema([("id", pa.string()), ("text", pa.string())])
KEY = b"k" * 32
ERASURE = {"erasure": "e1", "at": "2026-11-29T12:00:00+00:00", "by": "dpo"}


def _dataset(tmp_path: Path) -> Store:
    """An ingest dataset: an encrypted accepted table of two files, one quarantine row."""
    store = Store(str(tmp_path / "store"), signing_key=KEY)
    writer = store.begin_dataset("ingest", "k" * 64)
    rows = [{"id": "a", "text": "mail jane@example.com"}, {"id": "b", "text": "hello"}]
    write_table(store, writer.part_uri("accepted", 0), rows, SCHEMA, store.raw_cipher)
    write_table(store, writer.part_uri("accepted", 1), [{"id": "c", "text": "x"}], SCHEMA)
    write_table(store, writer.part_uri("quarantine", 0), [{"id": "a", "text": "{bad"}], SCHEMA)
    info = {
        "accepted": {"rows": 3, "files": ["accepted/part-00000.parquet", "accepted/part-00001.parquet"],
                     "schema": {}},
        "quarantine": {"rows": 1, "files": ["quarantine/part-00000.parquet"], "schema": {}},
    }  # fmt: skip
    writer.commit(
        task="extractive-qa", content_hash="h" * 64, parent_hashes=[], config_hash="c",
        counts={"read": 4, "accepted": 3, "quarantined": 1}, tables=info,
    )  # fmt: skip
    return store


def _rows(store: Store) -> list[dict]:
    [manifest] = store.manifests()
    return [
        r
        for info in manifest.tables.values()
        for name in info.files
        for r in read_table(store, f"{manifest.uri}/{name}")
    ]


def test_a_rewrite_is_a_new_signed_version_without_the_rows(tmp_path: Path) -> None:
    store = _dataset(tmp_path)
    [before] = store.manifests()
    new = rewrite_without(store, before, lambda r: r["id"] == "a", ERASURE)
    assert new is not None
    assert sorted(r["id"] for r in _rows(store)) == ["b", "c"]
    assert store.problems(new) == []  # signed again, every file hashed
    assert new.counts == {"read": 4, "accepted": 2, "quarantined": 0, "erased": 2}
    assert new.content_hash != before.content_hash
    assert new.extra["erasures"][0]["content_hash_before"] == before.content_hash
    assert new.tables["quarantine"].files == []  # a file left empty is not kept
    [rewritten] = [n for n in new.tables["accepted"].files if ".erased-e1." in n]
    assert is_encrypted((Path(new.uri) / rewritten).read_bytes())  # raw stays encrypted
    names = {p.relative_to(new.uri).as_posix() for p in Path(new.uri).rglob("*.parquet")}
    assert names == set(new.files) - {"report.json"}  # no old file left beside the new ones
    assert store.dataset_with_hash("ingest", before.content_hash) is not None  # a lineage's
    assert rewrite_without(store, new, lambda r: r["id"] == "a", ERASURE) is None


def test_a_rewrite_that_stopped_half_way_is_finished_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _dataset(tmp_path)
    [before] = store.manifests()
    removed: list[str] = []

    def crash(uri: str, recursive: bool = False) -> None:  # the process dies deleting
        removed.append(uri)
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "remove", crash)
    with pytest.raises(KeyboardInterrupt):
        rewrite_without(store, before, lambda r: r["id"] == "a", ERASURE)
    monkeypatch.undo()
    assert (Path(before.uri) / JOURNAL).exists() and removed  # the old file is still there
    assert finish_pending(store, before.uri)
    assert not (Path(before.uri) / JOURNAL).exists()
    assert sorted(r["id"] for r in _rows(store)) == ["b", "c"]
    [after] = store.manifests()
    assert store.problems(after) == []
    old = Path(before.uri) / "accepted" / "part-00000.parquet"
    assert not old.exists()

"""split: deterministic, grouped, stable when data grows; ratios validated."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from platforms.compute import shared_client
from platforms.store import read_table
from tasks.ingest import run_ingest
from tasks.screen import run_screen
from tasks.split import SplitConfig, assign_split, run_split
from tests.conftest import write_jsonl


def test_ratios_must_sum_to_one() -> None:
    with pytest.raises(ValidationError, match=r"must sum to 1\.0, got 1\.1"):
        SplitConfig(train=0.8, validation=0.2, test=0.1)


def test_a_share_given_alone_takes_the_rest_from_train_or_says_what_to_set() -> None:
    """Issue 44 item 5: `split.test=0.3` alone was refused ("must sum to 1.0")."""
    assert SplitConfig.model_validate({"test": 0.3}).train == 0.6  # validation keeps its 0.1
    shares = SplitConfig.model_validate({"validation": 0.2, "test": 0.2})
    assert (shares.train, shares.validation, shares.test) == (0.6, 0.2, 0.2)
    with pytest.raises(ValidationError, match=r"got 1\.2: set split\.train=0\.6 \(the rest\)"):
        SplitConfig.model_validate({"train": 0.8, "test": 0.3})
    with pytest.raises(ValidationError, match=r"leave nothing for split\.train: lower them"):
        SplitConfig.model_validate({"validation": 0.5, "test": 0.6})


def test_assignment_follows_the_ratios_and_is_stable() -> None:
    config = SplitConfig(train=0.7, validation=0.2, test=0.1)
    counts = Counter(assign_split(f"group-{i}", config) for i in range(20_000))
    assert abs(counts["train"] / 20_000 - 0.7) < 0.02
    assert abs(counts["validation"] / 20_000 - 0.2) < 0.02
    assert assign_split("group-7", config) == assign_split("group-7", config)
    salted = SplitConfig(train=0.7, validation=0.2, test=0.1, salt="other")
    assert any(assign_split(f"g{i}", config) != assign_split(f"g{i}", salted) for i in range(50))


def _records(n_contexts: int, start: int = 0) -> list[str]:
    lines = []
    for c in range(start, start + n_contexts):
        context = f"Order {c} shipped from warehouse {c % 7} after {c % 5 + 1} days."
        for q, (question, answer) in enumerate(
            [("Which order?", f"Order {c}"), ("How long?", f"{c % 5 + 1} days")]
        ):
            lines.append(
                json.dumps(
                    {
                        "id": f"o{c}-{q}",
                        "question": question,
                        "context": context,
                        "answers": {"text": [answer], "answer_start": [context.index(answer)]},
                    }
                )
            )
    return lines


def _split(make_config, path: Path, exclude: list[str] | None = None):
    cfg = make_config(
        ingest={"inputs": [str(path)]}, split={"train": 0.6, "validation": 0.2, "test": 0.2}
    )
    client, store = shared_client(cfg.dask), cfg.open_store()
    ingested = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 50)
    screened, _ = run_screen(client, store, ingested, cfg.screen)
    ref = run_split(client, store, screened, cfg.split, exclude or [])
    rows = {
        s: [r for f in store.table_files(ref, s) for r in read_table(store, f)]
        for s in ("train", "validation", "test")
    }
    return ref, {r["id"]: (s, r["context"]) for s, rs in rows.items() for r in rs}


def _apart(lines: list[str]) -> list[str]:
    """Each context's two records far apart: in two partitions of 50."""
    return lines[0::2] + lines[1::2]


def test_groups_never_straddle_and_old_records_keep_their_split(
    make_config, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", _apart(_records(60)))
    ref, first = _split(make_config, path, exclude=["o1-0"])
    assert "o1-0" not in first and ref.counts["excluded"] == 1
    by_context: dict[str, set[str]] = {}
    for split, context in first.values():
        by_context.setdefault(context, set()).add(split)
    assert all(len(splits) == 1 for splits in by_context.values())
    assert {s for s, _ in first.values()} == {"train", "validation", "test"}
    # the manifest counts each group once, its records in two partitions
    groups = make_config().open_store().read_manifest(ref.uri).extra["groups"]
    assert groups == Counter(splits.pop() for splits in by_context.values())

    write_jsonl(path, _apart(_records(60)) + _apart(_records(30, start=60)))
    _, grown = _split(make_config, path, exclude=["o1-0"])
    assert all(grown[rid][0] == split for rid, (split, _) in first.items())
    assert len(grown) == len(first) + 60

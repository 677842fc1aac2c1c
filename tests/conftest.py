"""Shared fixtures: one real Dask LocalCluster and one Prefect test API for the whole session."""

from __future__ import annotations

import os

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from flows.config import PipelineConfig, validate_config
from platforms.compute import DaskConfig

DASK = DaskConfig(n_workers=2, threads_per_worker=1, memory_limit="3GiB", partition_rows=200)


@pytest.fixture(scope="session")
def prefect_api() -> Iterator[None]:
    """A temporary Prefect server and database for flow tests."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture
def make_config(tmp_path: Path) -> Callable[..., PipelineConfig]:
    """A PipelineConfig on a fresh store in tmp_path, on the session's LocalCluster."""

    def make(**sections: Any) -> PipelineConfig:
        data: dict[str, Any] = {
            "store": str(tmp_path / "store"),
            "dask": DASK.model_dump(),
            "until": "split",  # the data half; model-half tests ask for more
        }
        data.update(sections)
        return validate_config(data)

    return make


def write_jsonl(path: Path, lines: list[str | bytes]) -> Path:
    """Write raw lines (str or bytes) as a JSONL file."""
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return path

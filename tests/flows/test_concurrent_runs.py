"""Two `tunegate run`s on one store at once (same input, and another input) both finish with
their summaries, and the store they leave is consistent: every dataset verifies, no scratch
folder is left, one dataset per key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.tickets import qa_tickets

pytestmark = pytest.mark.slow  # real `tunegate run` processes, each with its own Prefect API

TUNEGATE = Path(sys.executable).parent / "tunegate"


def test_concurrent_runs_on_one_store_leave_it_consistent(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, other = qa_tickets(tmp_path / "a"), qa_tickets(tmp_path / "b", n_contexts=8)
    env = {**os.environ, "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": "", "HF_HUB_OFFLINE": "1"}
    runs = []
    for i, data in enumerate([first, first, other]):
        command = [
            str(TUNEGATE), "run", "--input", str(data), "--approval", "auto",
            "--set", f"store={store}", "--set", "until=split", "--set", "dask.n_workers=1",
            "--summary", str(tmp_path / f"summary-{i}.json"),
        ]  # fmt: skip
        log = (tmp_path / f"run-{i}.log").open("w")
        runs.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env))
    codes = [run.wait(timeout=600) for run in runs]
    logs = [(tmp_path / f"run-{i}.log").read_text()[-2000:] for i in range(3)]
    assert codes == [0, 0, 0], logs

    summaries = [json.loads((tmp_path / f"summary-{i}.json").read_text()) for i in range(3)]
    assert all(s["status"] == "completed" for s in summaries)
    same = [s["stages"]["split"]["details"]["content_hash"] for s in summaries[:2]]
    assert same[0] == same[1] != summaries[2]["stages"]["split"]["details"]["content_hash"]

    verify = CliRunner().invoke(app, ["store", "verify", "--set", f"store={store}"])
    assert verify.exit_code == 0, verify.output
    datasets = store / "datasets"
    assert not list(datasets.glob("*/.tmp-*")), "a scratch folder was left behind"
    for stage in ("ingest", "screen", "split"):
        assert len(list((datasets / stage).iterdir())) == 2  # one per input, never a copy
    approvals = list((store / "approvals").glob("*/*.json"))
    assert {json.loads(a.read_text())["decision"] for a in approvals} == {"approved"}

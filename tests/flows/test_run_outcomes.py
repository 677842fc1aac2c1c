"""`tunegate run`'s outcomes on bad input: exit 2 with a message, a summary for every run that
started, nothing asked of a reviewer when there is nothing to review, BOM-prefixed files read."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from prefect import task
from typer.testing import CliRunner

from cli.main import app
from platforms.store import read_table
from tasks.ingest import run_ingest
from tests.conftest import DASK, write_jsonl
from tests.tickets import qa_tickets

runner = CliRunner()


def _args(tmp_path: Path) -> list[str]:
    args = ["--set", f"store={tmp_path / 'store'}", "--approval", "auto"]
    return args + [x for k, v in DASK.model_dump().items() for x in ("--set", f"dask.{k}={v}") if v]


def test_a_store_that_is_a_file_and_an_input_matching_nothing_exit_2_before_the_flow(
    tmp_path: Path,
) -> None:
    afile = tmp_path / "store-file"
    afile.write_text("not a folder")
    result = runner.invoke(app, ["run", "-i", "x.jsonl", "--set", f"store={afile}"])
    assert result.exit_code == 2
    assert "store" in result.output and "is a file; give a directory" in result.output
    assert "Traceback" not in result.output

    result = runner.invoke(app, ["run", "-i", str(tmp_path / "none-*.jsonl"), *_args(tmp_path)])
    assert result.exit_code == 2 and "nothing matches" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "store").exists()


@pytest.mark.slow
def test_an_input_without_a_usable_record_stops_before_approval_with_exit_2(
    prefect_api, tmp_path: Path
) -> None:
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        ['{"id": "a", "document": "not a QA record"}', "{broken", '{"id": "c", "question": 3}'],
    )
    summary = tmp_path / "summary.json"
    result = runner.invoke(
        app, ["run", "-i", str(bad), "--summary", str(summary), *_args(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "ingest left no usable record" in result.output
    written = json.loads(summary.read_text())
    assert written["status"] == "no-usable-records"
    assert set(written["stages"]) == {"ingest"}  # never screened, approved or split
    assert written["stages"]["ingest"]["details"]["quarantined"] == 3
    assert not (tmp_path / "store" / "approvals").exists()


@task(name="split")
def _failing_split(*_: object, **__: object) -> None:
    raise OSError("No space left on device")


@pytest.mark.slow
def test_a_failed_stage_still_writes_the_summary_naming_it(
    prefect_api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flows.retrain

    monkeypatch.setattr(flows.retrain, "split_task", _failing_split)
    data = qa_tickets(tmp_path)
    summary = tmp_path / "summary.json"
    judgeable = ["--set", "split.salt=s6", "--set", "evaluate.min_test_records=9"]  # 9 in test
    result = runner.invoke(
        app, ["run", "-i", str(data), "--summary", str(summary), *_args(tmp_path), *judgeable]
    )
    assert result.exit_code == 1, result.output
    written = json.loads(summary.read_text())
    assert written["status"] == "failed"
    assert written["message"] == "split failed: OSError: No space left on device"
    assert [s["status"] for s in written["stages"].values()] == [
        "completed",
        "completed",
        "completed",
        "failed",
    ]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_utf8_bom_does_not_hide_the_first_column(make_config, tmp_path: Path, fmt: str) -> None:
    from platforms.compute import shared_client

    lines = qa_tickets(tmp_path, n_contexts=2).read_text().splitlines()
    records = [json.loads(line) for line in lines if line.startswith('{"id"')]
    if fmt == "csv":
        import csv
        import io

        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["id", "question", "context", "answers"])
        for r in records:
            writer.writerow([r["id"], r["question"], r["context"], json.dumps(r["answers"])])
        body = out.getvalue().encode()
    else:
        body = "\n".join(json.dumps(r) for r in records).encode()
    path = tmp_path / f"excel.{fmt}"
    path.write_bytes(b"\xef\xbb\xbf" + body)
    cfg = make_config(ingest={"inputs": [str(path)]})
    store = cfg.open_store()
    client = shared_client(cfg.dask)
    ref = run_ingest(client, store, cfg.task, cfg.columns, cfg.ingest, cfg.azure, 200)
    accepted = [r for f in store.table_files(ref, "accepted") for r in read_table(store, f)]
    assert ref.counts["quarantined"] == 0
    assert sorted(r["id"] for r in accepted) == sorted(r["id"] for r in records)


@pytest.mark.slow
def test_a_test_split_too_small_to_judge_stops_before_the_reviewer_is_asked(
    prefect_api, make_config, tmp_path: Path
) -> None:
    from flows.retrain import retrain
    from platforms.approvals import ApprovalMode

    cfg = make_config(
        ingest={"inputs": [str(qa_tickets(tmp_path))]},
        approval={"mode": ApprovalMode.manual, "timeout_seconds": 60, "poll_seconds": 1},
        split={"salt": "s6"},  # 12 screened tickets of 3 questions: 3 tickets, 9 records, in test
        evaluate={"min_test_records": 30},
        until="register",
    )
    started = time.monotonic()
    state = retrain(cfg, return_state=True)
    assert time.monotonic() - started < 60  # it never waited for the reviewer
    assert state.is_failed() and state.name == "CannotJudge"
    assert "the gate cannot judge this data, nothing was asked of a reviewer" in (state.message)
    assert "cannot judge on 9 test records (evaluate.min_test_records: 30)" in state.message
    assert "split.test" in state.message  # what to change
    summary = state.result(raise_on_failure=False)
    assert summary.status == "cannot-judge"
    assert set(summary.stages) == {"ingest", "screen"}  # never approved, split nor trained
    assert not (tmp_path / "store" / "approvals").exists()

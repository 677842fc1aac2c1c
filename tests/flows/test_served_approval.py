"""A reviewer answers a paused retrain/manual run from the shell: `tunegate approve` / `reject`.

The run is triggered through the API of a real `prefect server start` and runs under
`tunegate deployments serve` (fixtures in conftest.py), as an operator's would; the decision is
given with the installed `tunegate` command (refused answers in-process, which starts faster).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from typer.testing import CliRunner

from cli.main import app
from platforms.endpoint import stop_local_endpoint
from platforms.registry import MlflowRegistry
from serving.client import EndpointClient
from tests.platforms.test_reviewer_keys import keygen_fingerprint, make_key, reviewers_line
from tests.prefect_server import artifacts, start_manual_run, wait_for_state
from tests.tickets import qa_tickets

pytestmark = pytest.mark.slow

ENDPOINT = Path("endpoints") / "tunegate-extractive-qa"  # the model's own endpoint
TUNEGATE = Path(sys.executable).with_name("tunegate")  # the installed console script
PAUSE_SECONDS = 120
FINISH_SECONDS = 90


def tunegate(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TUNEGATE), *args], env=env, capture_output=True, text=True, timeout=120
    )


def paused_run(store: Path, tmp_path: Path, n_contexts: int = 4, **sections: Any) -> UUID:
    run_id = start_manual_run(store, qa_tickets(tmp_path, n_contexts=n_contexts), **sections)
    wait_for_state(run_id, lambda r: bool(r.state and r.state.is_paused()), PAUSE_SECONDS)
    assert not (store / "datasets" / "split").exists()  # nothing moves before a decision
    return run_id


def audit_records(store: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((store / "approvals").glob("*/*.json"))]


def test_a_served_run_waits_for_tunegate_approve_and_then_splits(
    served: Path, prefect_server: dict[str, str], tmp_path: Path
) -> None:
    store = tmp_path / "store"
    run_id = paused_run(store, tmp_path)

    nobody = CliRunner().invoke(app, ["approve", str(run_id), "--reviewer", ""])
    assert nobody.exit_code == 1 and "reviewer" in nobody.output  # the server checks the form
    assert wait_for_state(run_id, lambda r: True, 0).state.is_paused()

    answer = tunegate(
        prefect_server, "approve", str(run_id), "--reviewer", "dana@example.com",
        "--comment", "screened sample looks clean", "--exclude", "t0-q0",
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr
    assert f"approved flow run {run_id} as dana@example.com" in answer.stderr

    run = wait_for_state(run_id, lambda r: bool(r.state and r.state.is_final()), FINISH_SECONDS)
    assert run.state.is_completed(), f"{run.state}\n{served.read_text()[-4000:]}"
    assert run.state.message == "data ingested, screened, approved and split"

    [audit] = audit_records(store)
    assert audit["decision"] == "approved" and audit["mode"] == "manual"
    assert (audit["reviewer"], audit["comment"]) == (
        "dana@example.com",
        "screened sample looks clean",
    )
    assert audit["flow_run_id"] == str(run_id) and audit["exclude_ids"] == ["t0-q0"]
    beside = json.loads((Path(audit["dataset_uri"]) / "approval.json").read_text())
    assert beside == audit
    [split] = (store / "datasets" / "split").iterdir()
    manifest = json.loads((split / "manifest.json").read_text())
    assert sum(manifest["counts"][s] for s in ("train", "validation", "test")) == 11  # 12 - t0-q0

    shown = artifacts(run_id)
    assert {"ingest-counts", "screening-report", "approval", "split-counts"} <= set(shown)
    assert (
        "dana@example.com" in shown["approval"]
        and "screened sample looks clean" in shown["approval"]
    )


def test_a_served_run_rejected_with_tunegate_reject_fails_before_split(
    served: Path, prefect_server: dict[str, str], tmp_path: Path
) -> None:
    store = tmp_path / "store"
    run_id = paused_run(store, tmp_path, n_contexts=3)

    answer = tunegate(
        prefect_server, "reject", str(run_id), "--reviewer", "sam", "--comment", "names left in"
    )
    assert answer.returncode == 0, answer.stderr

    run = wait_for_state(run_id, lambda r: bool(r.state and r.state.is_final()), FINISH_SECONDS)
    assert run.state.is_failed(), f"{run.state}\n{served.read_text()[-4000:]}"
    assert run.state.message == (
        "data rejected by sam: names left in; nothing was split or trained"
    )
    [audit] = audit_records(store)
    assert (audit["decision"], audit["reviewer"], audit["comment"]) == (
        "rejected",
        "sam",
        "names left in",
    )
    assert not (store / "datasets" / "split").exists()

    late = CliRunner().invoke(app, ["approve", str(run_id), "--reviewer", "late"])
    assert late.exit_code == 1 and "cannot resume" in late.output  # it is no longer paused


def test_an_approved_served_run_trains_registers_and_ends_serving_the_champion(
    served: Path, prefect_server: dict[str, str], tmp_path: Path
) -> None:
    """All eight stages under `tunegate deployments serve`: approve from the shell, then check
    the registry and the endpoint the run left serving."""
    store = tmp_path / "store"
    run_id = paused_run(
        store,
        tmp_path,
        n_contexts=12,
        until="rollout",
        train={"epochs": 1, "max_length": 96, "batch_size": 8, "args": {"doc_stride": 32}},
        evaluate={"min_gain_over_base": -100.0, "bootstrap_samples": 100, "min_test_records": 1},
    )
    answer = tunegate(prefect_server, "approve", str(run_id), "--reviewer", "eve@example.com")
    assert answer.returncode == 0, answer.stderr
    try:
        run = wait_for_state(run_id, lambda r: bool(r.state and r.state.is_final()), 300)
        assert run.state.is_completed(), f"{run.state}\n{served.read_text()[-4000:]}"

        registry = MlflowRegistry.local(store)
        champion = registry.alias("tunegate-extractive-qa", "champion")
        assert champion is not None and champion.version == 1  # moved by the rollout
        assert champion.lineage.flow_run_id == str(run_id)
        assert champion.lineage.approval and champion.lineage.approval.reviewer == "eve@example.com"

        server = json.loads((store / ENDPOINT / "server.json").read_text())
        admin_key = (store / ENDPOINT / "admin-key").read_text().strip()  # status is admin
        with EndpointClient(server["url"], admin_key) as endpoint:
            status = endpoint.status()
            assert [(d.name, d.traffic, d.version) for d in status.deployments] == [
                ("blue", 100, "tunegate-extractive-qa:1")
            ]
            context = "Ticket 3: Agent Kenji Watanabe reset the VPN token for the Lisbon office."
            reply = endpoint.score({"question": "What was reset?", "context": context})
            assert reply.deployment == "blue" and reply.body["answer"] in context
        assert {"evaluation", "model-version", "rollout"} <= set(artifacts(run_id))
    finally:
        stop_local_endpoint(store / ENDPOINT)


def test_a_verified_run_resumes_only_on_a_listed_key(
    served: Path, prefect_server: dict[str, str], tmp_path: Path
) -> None:
    """approval.require=verified under `tunegate deployments serve`: a typed answer (the UI
    form's, or `--reviewer` alone) and a key nobody listed are recorded or refused, and the run
    pauses again saying why; `tunegate approve --key` with a listed key resumes it."""
    keys = tmp_path / "keys"
    keys.mkdir()
    dana = make_key(keys, "dana@example.com")
    mallory = make_key(keys, "mallory@example.com", "ecdsa")
    reviewers = tmp_path / "reviewers"
    reviewers.write_text(reviewers_line("dana@example.com", "Dana Silva", dana))
    store = tmp_path / "store"
    approval = {"poll_seconds": 1, "reviewers_file": str(reviewers), "require": "verified"}
    run_id = paused_run(store, tmp_path, n_contexts=3, approval=approval)

    typed = tunegate(prefect_server, "approve", str(run_id), "--reviewer", "dana@example.com")
    assert typed.returncode == 1, typed.stderr
    assert "was recorded as unverified" in typed.stderr  # the run said why it waits again
    other = tunegate(prefect_server, "approve", str(run_id), "--key", str(mallory))
    assert other.returncode == 1 and f"the key {keygen_fingerprint(mallory)} is not in" in (
        other.stderr.replace("\n", "")
    )
    assert wait_for_state(run_id, lambda r: True, 0).state.is_paused()
    assert not (store / "datasets" / "split").exists()

    signed = tunegate(prefect_server, "approve", str(run_id), "--key", str(dana), "--comment", "ok")
    assert signed.returncode == 0, signed.stderr
    assert f"as dana@example.com, signed by {keygen_fingerprint(dana)}" in signed.stderr
    run = wait_for_state(run_id, lambda r: bool(r.state and r.state.is_final()), FINISH_SECONDS)
    assert run.state.is_completed(), f"{run.state}\n{served.read_text()[-4000:]}"
    typed_record, verified = sorted(audit_records(store), key=lambda r: r["decided_at"])
    assert "identity" not in typed_record  # typed: written as every record before identities
    assert typed_record["reviewer"] == "dana@example.com"
    assert verified["identity"]["fingerprint"] == keygen_fingerprint(dana)
    assert verified["identity"]["name"] == "Dana Silva" and verified["flow_run_id"] == str(run_id)

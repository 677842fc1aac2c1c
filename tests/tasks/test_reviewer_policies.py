"""Reviewers who prove who they are, and the policies a compliance team sets (issue 42 items 1-2).

The approve stage runs for real over a store, with real SSH keys made by ssh-keygen and Entra ID
tokens signed by a test key set; decisions are signed by the same code `tunegate approve --key`
runs (cli/signing.py). Only the pause is replaced by the answers reviewers send, since pausing
needs a Prefect server (tests/flows/test_served_approval.py pauses and resumes a real one, and
`test_a_verified_run_resumes_only_on_a_listed_key` there runs this policy under it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from typer.testing import CliRunner

import tasks.approve as approve
from cli.main import app
from cli.signing import Signer, SigningFailed, sign_decision
from flows.config import ConfigError, validate_config
from platforms.approvals import ApprovalMode, ApprovalRecord, find_decisions
from platforms.backends import Backends, BackendSettings
from screening.report import Screened
from tasks.approval_config import ApprovalConfig
from tasks.approve import ApprovalInput, DataRejected, approve_task
from tests.platforms.test_reviewer_keys import (
    AUDIENCE,
    TENANT,
    entra_keys,
    entra_token,
    keygen_fingerprint,
    make_key,
    reviewers_line,
    running_ssh_agent,
)
from tests.tasks.test_review_changes import _screened

KEY = "a key for these tests, long enough"


class StillPaused(Exception):
    """Nobody has answered yet: the run would still be paused."""


class Reviewers:
    """The people answering the paused run: each answer is what `tunegate approve|reject`
    (signed or not) or the UI form sends; what the run showed them is kept."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, screened: Screened) -> None:
        self.screened = screened
        self.answers: list[dict[str, Any]] = []
        self.shown: list[str] = []
        monkeypatch.setattr(approve.pause, "ask", self.ask)
        monkeypatch.setattr(approve, "create_markdown_artifact", lambda **_: None)
        monkeypatch.setenv("TUNEGATE_APPROVAL_KEY", KEY)

    def ask(self, form, at_deadline, timeout, poll, initial=None) -> ApprovalInput:
        self.shown.append(initial["description"])
        if not self.answers:
            raise StillPaused()
        return ApprovalInput(**self.answers.pop(0))

    def typed(self, reviewer: str, decision: str = "approve") -> None:
        """The Prefect UI form's answer: a name typed in."""
        self.answers.append({"decision": decision, "reviewer": reviewer, "comment": "typed"})

    def signed(self, signer: Signer, decision: str = "approve", **fields: Any) -> None:
        """`tunegate approve|reject --key` (or --token): the decision signed by `signer`."""
        exclude_ids = fields.pop("exclude_ids", [])
        signed = sign_decision(
            signer,
            flow_run_id=None,  # no flow run around the task in these tests
            dataset_hash=fields.pop("dataset_hash", self.screened.dataset.content_hash),
            decision=decision,
            reviewer=fields.pop("reviewer", None),
            comment="looked at every flagged record",
            exclude_ids=exclude_ids,
        )
        self.answers.append(
            {
                "decision": decision,
                "reviewer": signed.reviewer,
                "comment": "looked at every flagged record",
                "exclude_ids": exclude_ids,
                "proof": signed.proof.model_dump_json(),
            }
        )


@pytest.fixture
def data(tmp_path: Path) -> tuple[Backends, Screened]:
    backends = Backends(BackendSettings(store=str(tmp_path / "store")))
    ref, report = _screened(backends.store, "a", ["r1", "r2"], persons=1)
    return backends, Screened(dataset=ref, report=report)


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    """dana (Ed25519) and sam (ECDSA P-256) are listed reviewers; mallory's key is not listed."""
    folder = tmp_path / "keys"
    folder.mkdir()
    return {
        "dana": make_key(folder, "dana@example.com"),
        "sam": make_key(folder, "sam@example.com", "ecdsa"),
        "mallory": make_key(folder, "mallory@example.com"),
    }


def reviewers_file(tmp_path: Path, keys: dict[str, Path], entra: bool = False) -> Path:
    path = tmp_path / "reviewers"
    text = reviewers_line("dana@example.com", "Dana Silva", keys["dana"])
    text += reviewers_line("sam@example.com", "Sam Okafor", keys["sam"])
    if entra:
        text += "uma@contoso.com Uma Rao entra\n\n[entra]\n"
        text += f"tenant = {TENANT}\naudience = {AUDIENCE}\njwks_file = jwks.json\n"
    path.write_text(text)
    return path


def _run(
    data: tuple[Backends, Screened], config: ApprovalConfig, owners: list[str] | None = None
) -> ApprovalRecord:
    backends, screened = data
    return approve_task.fn(backends, screened, config, None, owners)


def _verified(reviewers: Path, **fields: Any) -> ApprovalConfig:
    return ApprovalConfig(reviewers_file=str(reviewers), require="verified", **fields)


def test_a_decision_signed_by_a_listed_key_resumes_a_verified_run(
    data: tuple[Backends, Screened], keys: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    reviewers = Reviewers(monkeypatch, data[1])
    listed = reviewers_file(tmp_path, keys)
    reviewers.signed(Signer(key=keys["dana"]), exclude_ids=["r2"])
    record = _run(data, _verified(listed))
    assert record.approved and record.exclude_ids == ["r2"] and not record.reused
    assert record.identity is not None
    assert (record.identity.method, record.identity.email, record.identity.name) == (
        "ssh",
        "dana@example.com",
        "Dana Silva",
    )
    assert record.identity.fingerprint == keygen_fingerprint(keys["dana"])  # as ssh-keygen -l
    assert len(reviewers.shown) == 1
    assert "tunegate approve <run-id> --key ~/.ssh/id_ed25519" in reviewers.shown[0]
    assert "recorded as an unverified decision and does not resume" in reviewers.shown[0]

    # An auditor checks the stored record with OpenSSH alone: the reviewers file is its
    # allowed_signers (the name between e-mail and key removed), the payload rebuilt from it.
    [stored] = (Path(data[0].store.uri) / "approvals").glob("*/*.json")
    saved = ApprovalRecord.model_validate_json(stored.read_text())
    (tmp_path / "sig").write_text(saved.identity.signature)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(listed.read_text().replace('"Dana Silva" ', "").replace('"Sam Okafor" ', ""))
    checked = subprocess.run(
        ["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", "dana@example.com",
         "-n", "tunegate-approval", "-s", str(tmp_path / "sig")],
        input=saved.payload(), capture_output=True,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr

    # the same data again: the verified approval is reused, nobody is asked
    again = _run(data, _verified(listed))
    assert again.reused and again.identity == record.identity and len(reviewers.shown) == 1


def test_another_key_and_the_ui_form_do_not_decide_a_verified_run(
    data: tuple[Backends, Screened], keys: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    reviewers = Reviewers(monkeypatch, data[1])
    config = _verified(reviewers_file(tmp_path, keys))
    reviewers.typed("dana@example.com")  # the UI form: recorded, unverified, not resumed
    reviewers.signed(Signer(key=keys["mallory"]))  # a key nobody listed
    reviewers.signed(Signer(key=keys["dana"]), reviewer="sam@example.com")  # dana posing as sam
    reviewers.signed(Signer(key=keys["sam"]), dataset_hash="f" * 64)  # signed for other data
    reviewers.typed("dana@example.com", "reject")  # an unverified rejection stops nothing either
    with pytest.raises(StillPaused):
        _run(data, config)
    asked_again = [shown.split("**Asked again:** ", 1)[-1] for shown in reviewers.shown[1:]]
    assert asked_again[0].startswith("approved by dana@example.com on ")
    assert "was recorded as unverified" in asked_again[0]
    assert f"the key {keygen_fingerprint(keys['mallory'])} is not in" in asked_again[1]
    assert (
        "names the reviewer sam@example.com, but the proof is dana@example.com's"
        in (asked_again[2])
    )
    assert "signed for data ffffffffffffffff" in asked_again[3]
    backends, screened = data
    decisions = find_decisions(backends.store, screened.dataset, KEY.encode())
    # the two typed answers were kept, unverified; the refused signed ones are no decisions
    assert [(r.decision, r.verified) for r in decisions.records] == [
        ("rejected", False),
        ("approved", False),
    ]

    reviewers.signed(Signer(key=keys["sam"]))  # then a listed reviewer signs
    record = _run(data, config)
    assert record.approved and record.identity.email == "sam@example.com"


def test_an_edited_record_fails_verification_when_read_back(
    data: tuple[Backends, Screened], keys: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    reviewers = Reviewers(monkeypatch, data[1])
    config = _verified(reviewers_file(tmp_path, keys))
    reviewers.signed(Signer(key=keys["dana"]), exclude_ids=["r2"])
    _run(data, config)
    backends, screened = data
    [stored] = (Path(backends.store.uri) / "approvals").glob("*/*.json")
    original = ApprovalRecord.model_validate_json(stored.read_text())

    # Edited, and even signed again with the store's key (whoever runs tunegate has it): the
    # reviewer's own signature no longer matches, so this is no decision.
    edited = original.model_copy(update={"exclude_ids": []}).signed(KEY.encode())
    assert edited.problem(KEY.encode(), screened.dataset.content_hash) is not None
    stored.write_text(edited.model_dump_json())
    decisions = find_decisions(backends.store, screened.dataset, KEY.encode(), config.reviewers())
    assert decisions.records == [] and "the reviewer's SSH signature fails" in decisions.problems[0]
    audit = CliRunner().invoke(
        app,
        ["store", "verify", "--set", f"store={backends.store.uri}",
         "--set", f"approval.reviewers_file={tmp_path / 'reviewers'}"],
    )  # fmt: skip
    assert audit.exit_code == 1 and "1 of 1 approval records are not valid" in audit.output
    assert f"{stored.name}: the reviewer's SSH signature fails" in audit.output.replace("\n", "")
    # a reviewer taken off the file: their signature holds, but they are not listed any more
    stored.write_text(original.model_dump_json())
    (tmp_path / "reviewers").write_text(reviewers_line("sam@example.com", "Sam", keys["sam"]))
    decisions = find_decisions(backends.store, screened.dataset, KEY.encode(), config.reviewers())
    assert "is not listed for them in" in decisions.problems[0]
    # so a run over the data asks again, saying why
    with pytest.raises(StillPaused):
        _run(data, config)
    assert "is not listed for them in" in reviewers.shown[-1]


def test_two_reviewers_needed_means_two_different_people(
    data: tuple[Backends, Screened], keys: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    reviewers = Reviewers(monkeypatch, data[1])
    config = _verified(reviewers_file(tmp_path, keys), reviewers_needed=2)
    reviewers.signed(Signer(key=keys["dana"]))
    reviewers.signed(Signer(key=keys["dana"]))  # the same reviewer twice counts once
    reviewers.signed(Signer(key=keys["sam"]), exclude_ids=["r1"])  # approves something else
    with pytest.raises(StillPaused):
        _run(data, config)
    assert "approved by dana@example.com: 1 more needed" in reviewers.shown[2]
    assert "approved by sam@example.com: 1 more needed" in reviewers.shown[3]
    assert "2 different listed reviewers must answer" in reviewers.shown[0]

    reviewers.signed(Signer(key=keys["sam"]))  # sam approves what dana approved
    record = _run(data, config)
    assert record.approved and record.identity.email == "sam@example.com"
    assert record.exclude_ids == []


def test_a_verified_rejection_stops_the_run_and_the_owner_may_not_approve(
    data: tuple[Backends, Screened], keys: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    reviewers = Reviewers(monkeypatch, data[1])
    config = _verified(reviewers_file(tmp_path, keys))
    reviewers.signed(Signer(key=keys["dana"]))  # dana owns the data
    with pytest.raises(StillPaused):
        _run(data, config, owners=["Dana@Example.com"])
    assert "dana@example.com owns this data and may not approve it" in reviewers.shown[-1]
    reviewers.signed(Signer(key=keys["sam"]), "reject")
    with pytest.raises(DataRejected, match=r"data rejected by sam@example\.com"):
        _run(data, config, owners=["dana@example.com"])


def test_the_owner_rule_holds_for_typed_names_too(
    data: tuple[Backends, Screened], monkeypatch
) -> None:
    """Under require=any an owner named in the config may not approve by typing their name."""
    reviewers = Reviewers(monkeypatch, data[1])
    reviewers.typed("dana@example.com")
    reviewers.typed("sam@example.com")
    record = _run(data, ApprovalConfig(), owners=["dana@example.com"])
    assert record.reviewer == "sam@example.com" and len(reviewers.shown) == 2
    assert "owns this data and may not approve it" in reviewers.shown[1]


def test_an_entra_id_token_proves_a_reviewer(
    data: tuple[Backends, Screened], keys: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    reviewers = Reviewers(monkeypatch, data[1])
    private, _ = entra_keys(tmp_path)  # writes tmp_path/jwks.json, the reviewers file's keys
    config = _verified(reviewers_file(tmp_path, keys, entra=True))
    reviewers.signed(Signer(token=entra_token(private, aud="api://another-app")))
    reviewers.signed(Signer(token=entra_token(private, exp=1, iat=0)))
    reviewers.signed(Signer(token=entra_token(private, upn="eve@contoso.com", oid="e")))
    forged = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    reviewers.signed(Signer(token=entra_token(forged)))
    reviewers.signed(Signer(token=entra_token(private)))
    record = _run(data, config)
    refused = [shown.split("**Asked again:** ", 1)[-1] for shown in reviewers.shown[1:]]
    assert "not for api://tunegate" in refused[0]
    assert "has expired" in refused[1]
    assert "eve@contoso.com (Entra ID e) is not a reviewer" in refused[2]
    assert "does not verify" in refused[3]
    assert record.approved and record.identity is not None
    assert (record.identity.method, record.identity.object_id, record.identity.username) == (
        "entra",
        "6f0e1c2d",
        "uma@contoso.com",
    )
    stored = json.loads(next((Path(data[0].store.uri) / "approvals").glob("*/*.json")).read_text())
    assert "eyJ" not in json.dumps(stored)  # the token itself (a credential) is not kept


def test_policies_that_cannot_work_are_config_errors(tmp_path: Path, keys: dict[str, Path]) -> None:
    listed = reviewers_file(tmp_path, keys)
    with pytest.raises(ConfigError, match=r"approval\.require=verified needs approval\.reviewers"):
        validate_config({"approval": {"require": "verified"}})
    with pytest.raises(ConfigError, match=r"reviewers_needed=2 needs approval\.require=verified"):
        validate_config({"approval": {"reviewers_needed": 2, "reviewers_file": str(listed)}})
    listed.write_text("eve@example.com Eve ssh-rsa AAAAB3NzaC1yc2E\n")
    with pytest.raises(ConfigError, match=r"approval\.reviewers_file.*line 1: unknown key type"):
        validate_config({"approval": {"reviewers_file": str(listed)}})
    config = validate_config(
        {
            "approval": {
                "reviewers_file": str(reviewers_file(tmp_path, keys)),
                "require": "verified",
            },
            "ingest": {"owner": "dana@example.com"},
        }
    )
    assert config.approval.policy(config.ingest.owners()).owners == {"dana@example.com"}
    assert config.approval.mode is ApprovalMode.manual


def test_ssh_agent_signs_a_decision_and_a_key_without_an_e_mail_needs_reviewer(
    data: tuple[Backends, Screened],
    keys: dict[str, Path],
    tmp_path: Path,
    monkeypatch,
) -> None:
    reviewers = Reviewers(monkeypatch, data[1])
    config = _verified(reviewers_file(tmp_path, keys))
    with running_ssh_agent(tmp_path) as socket_path:
        monkeypatch.setenv("SSH_AUTH_SOCK", socket_path)
        subprocess.run(["ssh-add", "-q", str(keys["sam"])], check=True)
        reviewers.signed(Signer(agent=True))  # the agent's one key, its comment the reviewer
    record = _run(data, config)
    assert record.identity.fingerprint == keygen_fingerprint(keys["sam"])

    laptop = make_key(tmp_path / "keys", "laptop")  # ssh-keygen's default comment: no e-mail
    with pytest.raises(SigningFailed, match=r"give --reviewer YOUR-EMAIL.*'laptop'"):
        reviewers.signed(Signer(key=laptop))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    run_id = "0b2f9a3e-8a8e-4c1e-9d54-2f7d3c1a0b11"
    refused = CliRunner().invoke(app, ["approve", run_id, "--key", str(keys["dana"])])
    assert refused.exit_code == 2 and "cannot sign: the Prefect API has no review" in refused.output

"""Approval records are signed with a key outside the store: an edit, a copy into another
dataset's folder or another key makes a record no approval, and the reason names the file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from platforms.approvals import ApprovalMode, ApprovalRecord, find_decisions, save_approval
from platforms.keys import private_key
from platforms.manifest import DatasetRef
from platforms.store import Store
from tasks.approve import ApprovalConfig

KEY = b"the reviewers' signing key......"


def _dataset(content_hash: str) -> DatasetRef:
    return DatasetRef(
        uri=f"/data/screen/{content_hash}", stage="screen", task="extractive-qa",
        key=content_hash, content_hash=content_hash, counts={},
    )  # fmt: skip


def _record(content_hash: str = "a" * 64, **changes: object) -> ApprovalRecord:
    fields = dict(
        decision="approved", reviewer="dana@example.com", comment="ok",
        decided_at="2026-11-23T10:00:00+00:00", mode=ApprovalMode.manual,
        dataset_uri=f"/data/screen/{content_hash}", dataset_hash=content_hash,
        report_hash="r", flow_run_id=None,
    )  # fmt: skip
    return ApprovalRecord(**{**fields, **changes})


def test_a_signed_record_verifies_and_any_change_breaks_it() -> None:
    signed = _record().signed(KEY)
    assert signed.problem(KEY, "a" * 64) is None
    assert "not signed" in _record().problem(KEY, "a" * 64)
    for change in ({"reviewer": "mallory"}, {"exclude_ids": ["x"]}, {"decision": "approved "}):
        edited = signed.model_copy(update=change)
        assert "does not match its content" in edited.problem(KEY, "a" * 64)
    assert "does not match" in signed.problem(b"another key, just as long.......", "a" * 64)
    assert "not " + "b" * 16 in signed.problem(KEY, "b" * 64)  # copied beside other data
    assert signed.record_hash == signed.model_copy(update={"reused": True}).record_hash


def _approval(store: Store, dataset: DatasetRef) -> tuple[ApprovalRecord | None, list[str]]:
    decisions = find_decisions(store, dataset, KEY)
    return decisions.approval(person_only=False), decisions.problems


def test_find_decisions_skips_forged_records_and_names_them(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "store"))
    reviewed, unreviewed = _dataset("a" * 64), _dataset("b" * 64)
    Path(reviewed.uri.replace("/data", str(tmp_path))).mkdir(parents=True)
    record = _record(dataset_uri=str(tmp_path / "screen" / ("a" * 64)))
    saved = save_approval(store, record, KEY)
    found, problems = _approval(store, reviewed)
    assert found is not None and found.reused and problems == []
    assert found.signature == saved.signature

    [stored] = (tmp_path / "store" / "approvals" / ("a" * 64)).glob("*.json")
    copy_dir = tmp_path / "store" / "approvals" / ("b" * 64)
    copy_dir.mkdir()
    (copy_dir / stored.name).write_text(stored.read_text())  # copied beside unreviewed data
    found, problems = _approval(store, unreviewed)
    assert found is None and stored.name in problems[0] and "approves dataset" in problems[0]

    data = json.loads(stored.read_text())
    stored.write_text(json.dumps({**data, "reviewer": "mallory"}))  # an edited reviewer
    found, problems = _approval(store, reviewed)
    assert found is None and "does not match its content" in problems[0]
    stored.write_text("{garbage")
    assert "unreadable" in _approval(store, reviewed)[1][0]


def test_the_signing_key_lives_outside_the_store(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("TUNEGATE_APPROVAL_KEY", raising=False)
    config = ApprovalConfig(key_file=str(tmp_path / "home" / "approval.key"))
    key = config.signing_key()
    path = tmp_path / "home" / "approval.key"
    assert len(key) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert config.signing_key() == key == private_key(path)
    monkeypatch.setenv("TUNEGATE_APPROVAL_KEY", "from the team's vault, long enough")
    assert config.signing_key() == b"from the team's vault, long enough"
    monkeypatch.setenv("TUNEGATE_APPROVAL_KEY", "short")
    with pytest.raises(ValueError, match="TUNEGATE_APPROVAL_KEY"):
        config.signing_key()


def test_a_damaged_key_file_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("TUNEGATE_APPROVAL_KEY", raising=False)
    path = tmp_path / "approval.key"
    path.write_text("not hex at all")
    with pytest.raises(ValueError, match=r"approval\.key holds no usable key.*delete it"):
        ApprovalConfig(key_file=str(path)).signing_key()


def test_a_key_file_others_can_read_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("TUNEGATE_APPROVAL_KEY", raising=False)
    config = ApprovalConfig(key_file=str(tmp_path / "approval.key"))
    key = config.signing_key()  # created 0600
    path = tmp_path / "approval.key"
    for mode in (0o644, 0o640, 0o602):
        path.chmod(mode)
        with pytest.raises(ValueError, match=r"readable or writable by others.*chmod 600"):
            config.signing_key()
    path.chmod(0o400)  # read-only for its owner is fine
    assert config.signing_key() == key


def test_the_screening_profile_is_signed_and_records_without_one_still_verify() -> None:
    before = _record().signed(KEY)  # the default profile: written as records were before it
    written = before.model_dump_json()
    assert "screen_profile" not in written
    assert ApprovalRecord.model_validate_json(written).problem(KEY, "a" * 64) is None
    literary = _record(screen_profile="literary").signed(KEY)
    assert json.loads(literary.model_dump_json())["screen_profile"] == "literary"
    assert literary.signature != before.signature
    edited = literary.model_copy(update={"screen_profile": None})
    assert "does not match its content" in edited.problem(KEY, "a" * 64)


def test_a_decision_records_the_profile_its_data_was_screened_with() -> None:
    from screening.report import ScreenReport
    from tasks.approve import make_record

    report = ScreenReport(
        task="text-generation", records_in=1, kept=1, redacted=0, quarantined=0, flagged=0,
        entities=[], quarantine_reasons={}, flagged_ids=[], samples=[], toxicity_threshold=1.0,
    )  # fmt: skip
    dataset = _dataset("a" * 64)
    made = {
        profile: make_record(
            dataset,
            report.model_copy(update={"profile": profile}),
            ApprovalMode.auto,
            approved=True,
            reviewer="policy",
            comment="",
        )
        for profile in ("personal", "literary")
    }
    assert made["personal"].screen_profile is None  # the default: as records were written before
    assert made["literary"].screen_profile == "literary"


def test_a_version_registered_before_reviewer_identities_still_verifies() -> None:
    """A model version's record embeds its approval; one signed before approvals could carry an
    `identity` has no such key, and its signature still holds (else every champion registered
    before the upgrade is refused as changed)."""
    import hashlib
    import hmac

    from platforms.lineage import Lineage
    from platforms.model_version import ModelVersion
    from screening.report import ScreenReport
    from tasks.approve import make_record

    report = ScreenReport(
        task="extractive-qa", records_in=1, kept=1, redacted=0, quarantined=0, flagged=0,
        entities=[], quarantine_reasons={}, flagged_ids=[], samples=[], toxicity_threshold=1.0,
    )  # fmt: skip
    approval = make_record(
        _dataset("b" * 64), report, ApprovalMode.manual, approved=True, reviewer="ana", comment=""
    )
    assert approval.identity is None
    version = ModelVersion(
        name="qa", version=1, path="/m", created_at="2026-11-01T00:00:00+00:00", metrics={},
        lineage=Lineage(approval=approval), files={"weights.bin": "0" * 64},
    )  # fmt: skip
    # the record as the code before identities wrote and signed it: no `identity` key at all
    written = json.loads(version.model_dump_json())
    assert "identity" not in written["lineage"]["approval"]
    key = b"k" * 32
    old = {k: v for k, v in written.items() if k not in ("path", "signature")}
    digest = hmac.new(key, json.dumps(old, sort_keys=True, separators=(",", ":")).encode(),
                      hashlib.sha256).hexdigest()  # fmt: skip
    read_back = ModelVersion.model_validate({**written, "signature": digest})
    assert read_back.signed(key).signature == digest
    assert read_back.signed_by(key) and not read_back.signed_by(b"another key" * 3)

    # as the release that added identities (e92468b..5c1a1ca) wrote it: `"identity": null`
    with_null = json.loads(json.dumps(old))
    with_null["lineage"]["approval"]["identity"] = None
    digest = hmac.new(key, json.dumps(with_null, sort_keys=True, separators=(",", ":")).encode(),
                      hashlib.sha256).hexdigest()  # fmt: skip
    stored = {**written, "signature": digest}
    stored["lineage"]["approval"]["identity"] = None
    read_back = ModelVersion.model_validate(stored)
    assert read_back.signed_by(key) and not read_back.signed_by(b"another key" * 3)
    # and a changed record does not verify in either form
    edited = ModelVersion.model_validate({**stored, "metrics": {"f1": 99.0}})
    assert not edited.signed_by(key)

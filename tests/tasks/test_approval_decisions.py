"""Decisions stick: a person's rejection binds to its dataset hash like an approval, and a run
that asks for a person never takes the policy's approval (issue 24 item 2, issue 27 item 4).

The approve stage runs for real over a store (signed records written and read back); only the
pause for a reviewer is replaced by the reviewer's answer, since pausing needs a Prefect server
(tests/flows/test_served_approval.py pauses and resumes a real one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tasks.approve as approve
from platforms.approvals import POLICY, ApprovalMode, ApprovalRecord, Decisions, find_decisions
from platforms.backends import Backends, BackendSettings
from screening.report import Screened
from tasks.approve import ApprovalConfig, DataRejected, approve_task, make_record
from tests.tasks.test_review_changes import _screened

KEY = "a key for these tests, long enough"


class Reviewer:
    """Stands in for the pause: answers as a person would, and keeps what they were shown."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.asked: list[list[str]] = []
        self.answer: dict[str, Any] = {"approved": True, "reviewer": "dana", "comment": "ok"}
        monkeypatch.setattr(approve, "request_review", self.review)
        monkeypatch.setattr(approve, "create_markdown_artifact", lambda **_: None)
        monkeypatch.setenv("TUNEGATE_APPROVAL_KEY", KEY)

    def review(
        self, screened, report, config, changes="", problems=None, reviewers=None, rights=None
    ) -> ApprovalRecord:
        self.asked.append(list(problems or []))
        return make_record(screened, report, config.mode, **self.answer)


@pytest.fixture
def data(tmp_path: Path) -> tuple[Backends, Screened]:
    backends = Backends(BackendSettings(store=str(tmp_path / "store")))
    ref, report = _screened(backends.store, "a", ["r1", "r2"], persons=1)
    return backends, Screened(dataset=ref, report=report)


def _run(data: tuple[Backends, Screened], mode: ApprovalMode) -> ApprovalRecord:
    backends, screened = data
    return approve_task.fn(backends, screened, ApprovalConfig(mode=mode))


def test_a_persons_rejection_stands_against_the_policy_until_a_person_approves(
    data: tuple[Backends, Screened], monkeypatch: pytest.MonkeyPatch
) -> None:
    reviewer = Reviewer(monkeypatch)
    reviewer.answer = {"approved": False, "reviewer": "dana", "comment": "names left in"}
    with pytest.raises(DataRejected, match="rejected by dana"):
        _run(data, ApprovalMode.manual)
    # an automatic run over the same data is refused, naming who said no and what to do
    with pytest.raises(
        DataRejected, match=r"rejected by dana .*names left in.*approval\.mode=manual"
    ):
        _run(data, ApprovalMode.auto)
    with pytest.raises(DataRejected, match="rejected by dana"):
        _run(data, ApprovalMode.auto_if_clean)
    # the next reviewer is shown the rejection; a person's approval overturns it
    reviewer.answer = {"approved": True, "reviewer": "eve", "comment": "fixed upstream"}
    approved = _run(data, ApprovalMode.manual)
    assert approved.approved and approved.reviewer == "eve"
    assert reviewer.asked[-1] and reviewer.asked[-1][0].startswith("this data was rejected by dana")
    # from now on an automatic run reuses that person's approval
    again = _run(data, ApprovalMode.auto)
    assert again.reused and again.reviewer == "eve"


def test_a_manual_run_never_takes_the_policys_approval(
    data: tuple[Backends, Screened], monkeypatch: pytest.MonkeyPatch
) -> None:
    reviewer = Reviewer(monkeypatch)
    by_policy = _run(data, ApprovalMode.auto)
    assert by_policy.reviewer == POLICY and by_policy.mode is ApprovalMode.auto
    assert reviewer.asked == []
    assert _run(data, ApprovalMode.auto).reused  # the policy's approval serves the policy

    by_person = _run(data, ApprovalMode.manual)  # paused, and said why
    assert not by_person.reused and by_person.reviewer == "dana"
    assert by_person.mode is ApprovalMode.manual  # the signed record states its mode
    [notes] = reviewer.asked
    assert "an automatic approval of this data exists (approved by the policy" in notes[0]
    assert _run(data, ApprovalMode.manual).reviewer == "dana"  # a person's approval is reused
    assert len(reviewer.asked) == 1


def test_a_review_that_nobody_answered_is_no_persons_rejection(
    data: tuple[Backends, Screened], monkeypatch: pytest.MonkeyPatch
) -> None:
    reviewer = Reviewer(monkeypatch)
    reviewer.answer = {"approved": False, "reviewer": "timeout", "comment": "no decision"}
    with pytest.raises(DataRejected):
        _run(data, ApprovalMode.manual)
    assert _run(data, ApprovalMode.auto).reviewer == POLICY


def test_decisions_are_read_newest_first_and_forged_ones_are_named(
    data: tuple[Backends, Screened], monkeypatch: pytest.MonkeyPatch
) -> None:
    Reviewer(monkeypatch)
    backends, screened = data
    _run(data, ApprovalMode.auto)
    _run(data, ApprovalMode.manual)
    key = KEY.encode()
    decisions = find_decisions(backends.store, screened.dataset, key)
    assert [r.reviewer for r in decisions.records] == ["dana", POLICY]
    assert decisions.approval(person_only=True).reviewer == "dana"
    folder = Path(backends.store.uri) / "approvals" / screened.dataset.content_hash
    first = sorted(folder.glob("*.json"))[0]  # the policy's, the older
    first.write_text(first.read_text().replace('"comment": "', '"comment": "edited '))
    forged = find_decisions(backends.store, screened.dataset, key)
    assert len(forged.records) == 1 and first.name in forged.problems[0]
    assert Decisions([], []).approval(person_only=False) is None


def test_a_paused_run_says_how_to_answer_it() -> None:
    """The exact commands (with the API a temporary server listens on) and the UI page."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from tasks.approve import how_to_answer

    with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:8322/api"}):
        hint = how_to_answer("0b2f")
    assert "PREFECT_API_URL=http://127.0.0.1:8322/api tunegate approve 0b2f --reviewer" in hint
    assert "tunegate reject 0b2f" in hint
    assert "Prefect UI: http://127.0.0.1:8322/runs/flow-run/0b2f" in hint

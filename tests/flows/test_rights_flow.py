"""Issue 42 item 3 in the flow: an input whose licence the policy refuses stops `retrain` before
anything is read or screened, the message naming the input and its licence."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.retrain import retrain
from tests.tickets import qa_tickets

pytestmark = pytest.mark.slow  # runs retrain against the session's Prefect API


def test_a_non_commercial_input_stops_a_commercial_run_before_screening(
    prefect_api, make_config, tmp_path: Path
) -> None:
    tickets = qa_tickets(tmp_path)
    cfg = make_config(
        ingest={"inputs": [{"path": str(tickets), "licence": "CC-BY-NC-4.0"}]},
        approval={"mode": "auto", "licences": {"refuse": ["non-commercial"]}},
    )
    state = retrain(cfg, return_state=True)
    assert state.is_failed()
    summary = state.result(raise_on_failure=False)
    assert list(summary.stages) == ["ingest"] and summary.stages["ingest"].status == "failed"
    assert f"{tickets}: licence CC-BY-NC-4.0 is refused" in state.message
    assert not (Path(cfg.store) / "datasets").exists()  # nothing read, screened or approved

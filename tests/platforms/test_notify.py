"""tunegate's decisions as Prefect events: emitted inside a run, related to it, counts only."""

from __future__ import annotations

import pytest
from prefect import flow

from platforms.notify import emit_decision, model_resource
from tests.prefect_server import events_named


@flow(name="emits-a-decision")
def _decide() -> str:
    from prefect.runtime import flow_run

    emit_decision("gate-failed", "tunegate-qa", {"verdict": "failed", "reasons": ["f1 < 50"]})
    return flow_run.id


@pytest.mark.slow
def test_a_decision_is_a_prefect_event_of_the_model_related_to_its_run(prefect_server) -> None:
    run_id = _decide()
    [event] = events_named("tunegate.gate.failed", related_to=f"prefect.flow-run.{run_id}")
    assert (
        event.resource.id
        == "tunegate.model.tunegate-qa"
        == model_resource("tunegate-qa")["prefect.resource.id"]
    )
    assert event.payload == {"model": "tunegate-qa", "verdict": "failed", "reasons": ["f1 < 50"]}
    roles = {r.role for r in event.related}
    assert "flow-run" in roles and "flow" in roles  # Prefect adds the run's flow (and tags)

"""Prefect and MLflow as one place (issue 44 item 4): a run prints and links the address of its
MLflow run (terminal, Prefect artifact), the MLflow run links back to its Prefect flow run, a
local run logs no `azureml.*` parameters, and MLflow opens the model's experiment on its runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect import flow
from prefect.settings import PREFECT_UI_URL, temporary_settings

from cli.common import console
from cli.stages import _print_summary
from flows.config import load_config
from flows.run_tracking import PREFECT_LINK_TAG, RunTracker, config_params
from flows.summary import RunSummary
from platforms import tracking

PREFECT_UI = "http://prefect.example:4200"
FLOW_RUN = "0b3c2f4e-0000-4000-8000-000000000001"


def _tracker(tmp_path: Path, *overrides: str, flow_run_id: str = FLOW_RUN) -> RunTracker:
    config = load_config(None, [f"store={tmp_path / 'store'}", "registry.model_name=m", *overrides])
    return RunTracker(config, config.backends(), RunSummary(flow_run_id=flow_run_id))


def test_a_local_run_prints_its_mlflow_address_and_links_back_to_prefect(tmp_path: Path) -> None:
    tracker = _tracker(tmp_path)
    with temporary_settings(updates={PREFECT_UI_URL: PREFECT_UI}), tracker:
        run = tracker.open("retrain-m")
        tracker.summary.end("completed")
    address = f"http://127.0.0.1:5000/#/experiments/{run.experiment_id}/runs/{run.run_id}"
    assert tracker.summary.tracking_run == address

    # the terminal's closing lines: the address whole, on one line, and what serves it
    with console.capture() as captured:
        _print_summary(tracker.summary)
    printed = captured.get()
    assert f"MLflow run: {address}" in printed.splitlines()
    assert "by `tunegate ui`" in printed

    # through the MLflow client: the tag and the description point back at the flow run
    client = tracking.client(tracker.backends.tracking_uri)
    found = client.get_run(run.run_id)
    back = f"{PREFECT_UI}/runs/flow-run/{FLOW_RUN}"
    assert found.data.tags[PREFECT_LINK_TAG] == back
    assert f"]({back})" in found.data.tags["mlflow.note.content"]
    # the parameters that matter: none of the unused platform's
    assert not [k for k in found.data.params if k.startswith("azureml.")]
    assert found.data.params["train.backend"] == "local"
    # the model's experiment opens on its runs (MLflow 3's "Machine learning" view)
    experiment = client.get_experiment(run.experiment_id)
    assert experiment.tags[tracking.EXPERIMENT_KIND] == tracking.TRAINING


def test_the_azureml_section_is_a_parameter_only_where_azure_ml_runs_a_part(
    tmp_path: Path,
) -> None:
    local = config_params(_tracker(tmp_path).config)
    assert not [k for k in local if k.startswith("azureml.")]
    config = load_config(
        None,
        [
            f"store={tmp_path / 'store'}",
            "train.backend=azureml",
            "azureml.workspace.subscription_id=00000000-0000-0000-0000-000000000000",
            "azureml.workspace.resource_group=rg",
            "azureml.workspace.workspace_name=ws",
        ],
    )
    assert [k for k in config_params(config) if k.startswith("azureml.")]


def test_a_tracking_ui_address_of_the_config_is_the_one_linked(tmp_path: Path) -> None:
    tracker = _tracker(tmp_path, "tracking.ui_url=https://mlflow.example/")
    with tracker:
        run = tracker.open("retrain-m")
        tracker.summary.end("completed")
    assert run.link == f"https://mlflow.example/#/experiments/{run.experiment_id}/runs/{run.run_id}"
    with console.capture() as captured:
        _print_summary(tracker.summary)
    assert "tunegate ui" not in captured.get()  # not the local UI: nothing to start
    with pytest.raises(ValueError, match=r"tracking\.ui_url must be an http"):
        load_config(None, [f"store={tmp_path}", "tracking.ui_url=mlflow.example"])


@pytest.mark.slow
def test_the_flow_run_s_artifact_holds_the_mlflow_run_s_address(
    prefect_api: None, tmp_path: Path
) -> None:
    """Inside a Prefect flow run: the `mlflow-run` artifact holds the address as a link."""
    from prefect.context import FlowRunContext

    @flow
    def tracked() -> tuple[str, str]:
        context = FlowRunContext.get()
        assert context is not None and context.flow_run is not None
        flow_run_id = str(context.flow_run.id)
        tracker = _tracker(tmp_path, flow_run_id=flow_run_id)
        with tracker:
            run = tracker.open("retrain-m")
            tracker.summary.end("completed")
        return flow_run_id, run.link

    flow_run_id, link = tracked()
    shown = _flow_artifacts(flow_run_id)["mlflow-run"]
    assert f"]({link})" in shown and link.startswith("http://127.0.0.1:5000/#/experiments/")


def _flow_artifacts(flow_run_id: str) -> dict[str, str]:
    """The artifacts a flow run made outside its tasks, key → data (an empty task-run filter
    would leave them out, and 3.8.8's sync client sends every unset filter as null)."""
    from prefect import get_client

    body = {
        "artifacts": {"flow_run_id": {"any_": [flow_run_id]}},
        "limit": 50,
        "offset": 0,
        "sort": "CREATED_DESC",
    }
    with get_client(sync_client=True) as client:
        response = client.request("POST", "/artifacts/filter", json=body)
    return {a["key"]: str(a["data"]) for a in response.json() if a["key"]}


def test_tunegate_ui_opens_the_model_s_experiment_on_its_runs(tmp_path: Path) -> None:
    from cli.ui import model_experiment, ui_url

    uri = tracking.ensure_local_database(tmp_path)
    assert model_experiment(uri, "helpdesk-qa") is None  # no run yet: the experiments page
    assert ui_url("127.0.0.1", 5001).endswith("/#/experiments?workflowType=machine_learning")
    # an experiment an older tunegate made, without its kind: MLflow 3 would open its GenAI
    # overview; `tunegate ui` tags it and prints its runs' address
    client = tracking.client(uri)
    made = client.create_experiment("helpdesk-qa")
    assert tracking.EXPERIMENT_KIND not in client.get_experiment(made).tags
    assert model_experiment(uri, "helpdesk-qa") == made
    assert client.get_experiment(made).tags[tracking.EXPERIMENT_KIND] == "custom_model_development"
    assert ui_url("127.0.0.1", 5001, made) == (
        f"http://127.0.0.1:5001/#/experiments/{made}/runs?workflowType=machine_learning"
    )

"""The retrain deployments: the UI form's schema, and registering and running them on a real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from prefect import get_client
from typer.testing import CliRunner

from cli.main import app
from flows.config import PipelineConfig, RetrainRequest
from flows.deployments import build_deployments
from tests.tickets import qa_tickets

ROOT = Path(__file__).resolve().parents[2]


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref") or next(
        (s["$ref"] for s in node.get("anyOf", []) + node.get("allOf", []) if "$ref" in s), None
    )
    return schema["$defs"][ref.rsplit("/", 1)[-1]] if ref else node


def _models(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every object model in the schema: the root and each $defs entry with properties."""
    found = {"PipelineConfig": schema}
    found.update({k: v for k, v in schema["$defs"].items() if "properties" in v})
    return found


def test_every_config_field_has_a_description_for_the_ui_form() -> None:
    schema = PipelineConfig.model_json_schema()
    missing = [
        f"{model}.{name}"
        for model, definition in _models(schema).items()
        for name, prop in definition["properties"].items()
        if not str(prop.get("description", "")).strip()
    ]
    assert not missing, f"fields without a description (the UI form shows none): {missing}"
    # Every model reachable from the root is in $defs: nesting is by $ref, not inline objects.
    nested_inline = [
        f"{model}.{name}"
        for model, definition in _models(schema).items()
        for name, prop in definition["properties"].items()
        if prop.get("type") == "object" and "properties" in prop
    ]
    assert not nested_inline


def test_config_enums_render_as_choices() -> None:
    schema = PipelineConfig.model_json_schema()
    choices = {}
    for model, definition in _models(schema).items():
        for name, prop in definition["properties"].items():
            target = _resolve(schema, prop)
            if "enum" in target:
                choices[f"{model}.{name}"] = target["enum"]
                assert all(isinstance(c, str) for c in target["enum"]), (model, name)
                nullable = {"type": "null"} in prop.get("anyOf", [])
                if "default" in prop and not (nullable and prop["default"] is None):
                    assert prop["default"] in target["enum"], (model, name)
    assert choices["PipelineConfig.task"] == [
        "extractive-qa",
        "summarization",
        "chat",
        "text-generation",
    ]
    assert choices["ApprovalConfig.mode"] == ["manual", "auto", "auto-if-clean"]
    assert choices["PipelineConfig.until"] == ["split", "register", "rollout"]


def test_nightly_and_manual_are_built_from_prefect_yaml(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text("store: /srv/tunegate\napproval:\n  mode: auto\n")
    served = build_deployments(config=base)
    pooled = build_deployments(config=base, inputs=["az://inbox/*.jsonl"], with_work_pool=True)
    nightly, manual = served
    assert [d.name for d in served] == [d.name for d in pooled] == ["nightly", "manual"]
    assert nightly.entrypoint == manual.entrypoint == "flows.retrain.retrain_request"
    [schedule] = nightly.schedules
    assert (schedule.schedule.cron, schedule.schedule.timezone) == ("0 2 * * *", "UTC")
    assert manual.schedules == []
    request = nightly.parameters["request"]
    assert request["approval"] == "auto-if-clean"  # prefect.yaml wins over the base file
    assert request["config_file"] == str(base.resolve())  # the form's default: --config
    assert request["inputs"] == ["inbox/*.jsonl"]
    assert RetrainRequest.model_validate(request).config().store == "/srv/tunegate"
    assert pooled[0].parameters["request"]["inputs"] == ["az://inbox/*.jsonl"]
    assert manual.parameters["request"]["approval"] == "auto"  # not in prefect.yaml: the file's
    assert manual.parameters["request"]["inputs"] == []  # the config file's ingest.inputs
    assert {d.work_pool_name for d in served} == {None}
    assert {d.work_pool_name for d in pooled} == {"tunegate-process"}
    assert [d.job_variables for d in served] == [{}, {}]
    assert [d.job_variables for d in pooled] == [{"working_dir": str(Path.cwd())}] * 2


def _null_typed(node: Any, where: str = "") -> list[str]:
    """Every place in a JSON schema that types a value as null (the UI's "Property is type
    'None'" widget)."""
    found = []
    if isinstance(node, dict):
        if node.get("type") == "null" or "null" in (node.get("type") or []):
            found.append(where)
        for key, value in node.items():
            found += _null_typed(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _null_typed(value, f"{where}/{i}")
    return found


def test_the_deployment_form_is_the_small_request_and_fits_a_screen() -> None:
    """What the Prefect UI builds the run form from (the flow's parameter schema, as
    `to_deployment` stores it): the request's five fields (the fifth, reason, filled in by
    triggers), titled and described, none null."""
    from prefect.utilities.callables import parameter_schema

    from flows.retrain import retrain_request

    schema = parameter_schema(retrain_request).model_dump()
    [manual] = [d for d in build_deployments() if d.name == "manual"]
    assert manual._parameter_openapi_schema.model_dump() == schema
    assert list(schema["properties"]) == ["request"] and schema["required"] == []
    request = _resolve({"$defs": schema["definitions"]}, schema["properties"]["request"])
    fields = request["properties"]
    assert list(fields) == ["inputs", "approval", "overrides", "config_file", "reason"]
    for name, prop in fields.items():
        assert prop["title"] and len(prop["description"]) > 30, name
    assert schema["definitions"]["ApprovalMode"]["enum"] == ["manual", "auto", "auto-if-clean"]
    assert not _null_typed(schema)
    assert len(json.dumps(schema, indent=2).splitlines()) < 80  # the whole config: 667


def test_a_request_loads_its_config_as_tunegate_run_set_does(tmp_path: Path) -> None:
    from cli.common import load_cli_config

    config_file = tmp_path / "team.yaml"
    config_file.write_text(f"store: {tmp_path / 'store'}\ntrain:\n  epochs: 3\n")
    overrides = ["train.epochs=1", "registry.model_name=helpdesk-qa"]
    request = RetrainRequest(
        inputs=["inbox/*.csv"],
        approval="auto-if-clean",
        config_file=str(config_file),
        overrides=overrides,
    )
    assert request.config() == load_cli_config(
        config_file,
        overrides,
        **{
            "ingest.inputs": ["inbox/*.csv"],
            "approval.mode": "auto-if-clean",
        },
    )
    assert (request.config().train.epochs, request.config().registry.model_name) == (
        1,
        "helpdesk-qa",
    )


def test_a_bad_override_fails_the_run_with_one_line_naming_the_field() -> None:
    from flows.retrain import retrain_request

    request = RetrainRequest(overrides=["train.epochz=2"])
    state = retrain_request.fn(request)  # the flow's body: it fails before any task
    assert state.is_failed()
    assert state.message.startswith("invalid config: train.epochz: unknown field")
    assert "\n" not in state.message
    assert state.data.status == "invalid-config"


def test_an_empty_inbox_ends_the_run_completed_with_nothing_new(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from flows.retrain import retrain_request

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    request = RetrainRequest(
        inputs=[f"{inbox}/*.jsonl"], overrides=[f"store={tmp_path / 'store'}"], approval="auto"
    )
    with caplog.at_level("INFO", logger="flows.summary"):
        state = retrain_request.fn(request)
    assert state.is_completed(), state.message
    assert state.message.startswith("nothing new since this store was created")
    assert f"{inbox}/*.jsonl hold no file" in state.message
    assert state.data.status == "nothing-new" and state.data.message == state.message
    assert state.message in caplog.text


def test_the_serve_script_runs_what_the_cli_imports() -> None:
    """`python deployments/serve.py` stays a runnable script around flows.deployments."""
    import runpy

    import flows.deployments

    script = runpy.run_path(str(ROOT / "deployments" / "serve.py"), run_name="not_main")
    assert script["serve_deployments"] is flows.deployments.serve_deployments
    assert script["build_deployments"] is build_deployments
    assert flows.deployments.PREFECT_YAML == ROOT / "deployments" / "prefect.yaml"


@pytest.mark.parametrize(
    "command", [["deployments", "serve"], ["deployments", "apply"], ["serve"], ["deploy"]]
)
def test_serve_and_apply_have_help(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "--cron" in result.output and "--timezone" in result.output
    assert "--config" in result.output and "--input" in result.output


def test_a_bad_cron_is_refused_before_anything_is_registered() -> None:
    result = CliRunner().invoke(app, ["deployments", "apply", "--cron", "every night"])
    assert result.exit_code == 2
    assert "cron" in result.output.lower()


def test_deploy_is_a_deprecated_alias_of_deployments_apply() -> None:
    result = CliRunner().invoke(app, ["deploy", "--cron", "every night"])
    assert result.exit_code == 2
    note, *rest = result.stderr.splitlines()
    assert "`tunegate deploy` is deprecated" in note and "`tunegate deployments apply`" in note
    assert "cron" in "\n".join(rest).lower()


# --- a real `prefect server start` and `tunegate deployments serve` (fixtures in conftest.py) --


@pytest.mark.slow
def test_apply_registers_nightly_and_manual(prefect_server: dict[str, str]) -> None:
    result = CliRunner().invoke(app, ["deployments", "apply", "--input", "/srv/inbox/*.jsonl"])
    assert result.exit_code == 0, result.output

    with get_client(sync_client=True) as client:
        nightly = client.read_deployment_by_name("retrain/nightly")
        manual = client.read_deployment_by_name("retrain/manual")
        pool = client.read_work_pool("tunegate-process")
    assert pool.type == "process"
    assert nightly.work_pool_name == manual.work_pool_name == "tunegate-process"
    [schedule] = nightly.schedules
    assert schedule.active
    assert (schedule.schedule.cron, schedule.schedule.timezone) == ("0 2 * * *", "UTC")
    request = nightly.parameters["request"]
    assert request["approval"] == "auto-if-clean"
    assert request["inputs"] == ["/srv/inbox/*.jsonl"]

    assert manual.schedules == []
    form = manual.parameter_openapi_schema
    assert list(form["properties"]) == ["request"]
    assert form["properties"]["request"]["$ref"].endswith("/RetrainRequest")
    definitions = form["definitions"]
    assert definitions["RetrainRequest"]["properties"].keys() == (
        RetrainRequest.model_json_schema()["properties"].keys()
    )
    assert definitions["ApprovalMode"]["enum"] == ["manual", "auto", "auto-if-clean"]
    assert manual.enforce_parameter_schema


@pytest.mark.slow
def test_manual_run_through_the_api_completes_under_serve(served: Path, tmp_path: Path) -> None:
    from prefect.deployments import run_deployment

    request = {
        "inputs": [str(qa_tickets(tmp_path, n_contexts=4))],
        "approval": "auto",
        "overrides": [
            f"store={tmp_path / 'store'}",
            "until=split",
            "dask.n_workers=1",
            "dask.threads_per_worker=1",
            "dask.memory_limit=2GiB",
        ],
    }
    run = run_deployment(
        "retrain/manual", parameters={"request": request}, timeout=75, poll_interval=1
    )
    assert run.state is not None and run.state.is_completed(), (
        f"{run.state}\n{served.read_text()[-4000:]}"
    )
    assert list((tmp_path / "store" / "datasets" / "split").iterdir())
    assert json.loads(json.dumps(run.parameters))["request"]["approval"] == "auto"


def test_a_run_records_why_it_started() -> None:
    """A trigger's reason is kept as given; without one, outside a scheduled run, a person."""
    from flows.retrain import started_because

    drift = RetrainRequest(reason="drift: input_length (v3, 05:00 to 06:00)")
    assert started_because(drift) == "drift: input_length (v3, 05:00 to 06:00)"
    assert started_because(RetrainRequest()).startswith("a person")

"""`tunegate azureml export`: YAML the SDK's own loaders accept, holding what a run would submit."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest
import yaml
from accelerate.commands.launch import launch_command_parser
from azure.ai.ml import load_compute, load_job, load_online_deployment, load_online_endpoint
from typer.testing import CliRunner

from cli.main import app
from flows.config import ConfigError, load_config
from platforms.azureml.config import AzureMLConfig, EnvironmentConfig, WorkspaceConfig
from platforms.azureml.entities import training_command
from trainer.args import parse_args

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [
    ROOT / "configs" / "azureml.yaml",
    *sorted((ROOT / "configs" / "azureml").glob("*.yaml")),
]


def _export(tmp_path: Path, config: Path, *extra: str) -> Path:
    out = tmp_path / "export"
    result = CliRunner().invoke(
        app, ["azureml", "export", "--config", str(config), "--out", str(out), *extra]
    )
    assert result.exit_code == 0, result.output
    return out


def _launcher_words(command: str) -> list[str]:
    """The command's words from the launcher on: without the `VAR=value` assignments before it
    (the base model's mount)."""
    words = shlex.split(command)
    while words and "=" in words[0] and not words[0].startswith("-"):
        words.pop(0)
    return words


def _trainer_argv(command: str, literals: dict[str, object] | None = None) -> list[str]:
    """The trainer's own flags in a job command, with Azure ML's placeholders filled in: the
    data and model folders, and each hyperparameter by its literal input's value."""
    bound = {"inputs.data": "/data", "outputs.model": "/out"}
    bound |= {f"inputs.{k}": str(v) for k, v in (literals or {}).items()}
    words = shlex.split(
        re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: bound.get(m.group(1), m.group(0)), command)
    )
    return words[words.index("trainer.train") + 1 :]


def _job_argv(job_yml: Path) -> list[str]:
    """The trainer's flags of an exported job.yml, its literal inputs substituted."""
    job = yaml.safe_load(job_yml.read_text())
    literals = {k: v for k, v in job["inputs"].items() if not isinstance(v, dict)}
    return _trainer_argv(job["command"], literals)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_every_scenario_exports_yaml_the_sdk_loads_back(tmp_path: Path, scenario: Path) -> None:
    cfg = load_config(scenario)
    out = _export(tmp_path, scenario)

    job = load_job(out / "job.yml")
    launch = cfg.azureml.launch
    assert job.type == "command"
    assert job.compute == cfg.azureml.compute.name
    assert job.resources.instance_count == launch.instance_count
    assert job.experiment_name == cfg.azureml.experiment
    assert job.outputs["model"].mode == "upload"  # rw_mount breaks at the end of long jobs
    assert job.inputs["data"].path == f"{cfg.azureml.data_asset}@latest"
    assert job.limits.timeout == launch.timeout_minutes * 60
    # The trainer flags parse with the trainer's own parser into the configured values.
    args = parse_args(_job_argv(out / "job.yml"))
    resolved = cfg.train.resolved_args(cfg.task.value)
    assert args.model == cfg.train.model
    assert (args.lora, args.max_length) == (resolved.lora, resolved.max_length)
    assert (args.data_dir, args.output_dir) == ("/data", "/out")
    # The code folder is relative to the YAML and holds the trainer and its launcher configs.
    code = (out / job.code).resolve()
    assert (code / "trainer" / "train.py").is_file()
    if launch.launcher == "accelerate":
        assert (code / "trainer" / "configs" / f"{launch.accelerate_config}.yaml").is_file()
    assert not list(code.rglob("__pycache__"))

    endpoint = load_online_endpoint(out / "endpoint.yml")
    assert (endpoint.name, endpoint.auth_mode) == (cfg.azureml.endpoint.name, "key")

    deployment = load_online_deployment(out / "deployment.yml")
    assert deployment.endpoint_name == cfg.azureml.endpoint.name
    assert deployment.instance_type == cfg.azureml.endpoint.instance_type
    assert deployment.model == f"{cfg.azureml.model_name}:1"
    assert deployment.readiness_probe.initial_delay == cfg.azureml.endpoint.initial_delay_seconds
    assert deployment.liveness_probe.initial_delay >= 500  # slow-loading models are not killed
    assert deployment.request_settings.request_timeout_ms == cfg.azureml.endpoint.request_timeout_ms
    assert deployment.environment_variables["WORKER_COUNT"] == str(cfg.azureml.endpoint.workers)
    serve_code = (out / deployment.code_configuration.code).resolve()
    score = serve_code / deployment.code_configuration.scoring_script
    imported = [
        n.module for n in ast.walk(ast.parse(score.read_text())) if isinstance(n, ast.ImportFrom)
    ]
    assert set(imported) == {"serving.scoring", "serving"}
    assert '"screening.outputs:traffic_masker"' in score.read_text()  # what masks collection
    # watched: App Insights on, and the masked requests and answers collected (by default)
    assert deployment.app_insights_enabled is cfg.azureml.endpoint.app_insights is True
    collections = deployment.data_collector.collections
    assert {n: c.enabled for n, c in collections.items()} == {
        "model_inputs": "true",
        "model_outputs": "true",
    }
    assert (serve_code / "screening" / "outputs.py").is_file()
    assert (serve_code / "serving" / "scoring.py").is_file()
    assert (serve_code / "trainer" / "modeling.py").is_file()

    compute = load_compute(out / "compute.yml")
    assert (compute.name, compute.size) == (cfg.azureml.compute.name, cfg.azureml.compute.size)
    assert compute.max_instances >= launch.instance_count


def test_multi_node_accelerate_takes_rank_and_rendezvous_from_azure_ml(tmp_path: Path) -> None:
    out = _export(tmp_path, ROOT / "configs" / "azureml.yaml")
    job = load_job(out / "job.yml")
    assert job.distribution.process_count_per_instance == 1  # accelerate starts the GPU processes
    # The node's shell expands the variables Azure ML sets: quoted, every node would be rank 0.
    assert "--machine_rank $NODE_RANK" in job.command
    assert "--main_process_ip $MASTER_ADDR --main_process_port $MASTER_PORT" in job.command
    node = {"$NODE_RANK": "1", "$MASTER_ADDR": "10.0.0.4", "$MASTER_PORT": "6105"}
    words = [node.get(w, w) for w in _launcher_words(job.command)]
    assert words[:2] == ["accelerate", "launch"]
    launch = launch_command_parser().parse_args(words[2:])
    assert (launch.num_machines, launch.num_processes, launch.machine_rank) == (2, 8, 1)
    assert (launch.main_process_ip, launch.main_process_port) == ("10.0.0.4", 6105)
    assert launch.config_file == "trainer/configs/deepspeed_zero3.yaml"
    assert launch.module and launch.training_script == "trainer.train"
    ds = yaml.safe_load((out / "train-code" / launch.config_file).read_text())["deepspeed_config"]
    assert ds["zero3_save_16bit_model"] is True  # LoRA adapters are saved with their weights
    assert ds["deepspeed_multinode_launcher"] == "standard"  # not pdsh: nodes have no ssh


def test_torchrun_launcher_lets_azure_ml_start_one_process_per_gpu(tmp_path: Path) -> None:
    out = _export(tmp_path, ROOT / "configs" / "azureml" / "mistral-7b-ddp.yaml")
    job = load_job(out / "job.yml")
    assert job.distribution.process_count_per_instance == 4
    assert job.resources.instance_count == 2
    assert _launcher_words(job.command)[:3] == ["python", "-m", "trainer.train"]


def test_single_node_accelerate_has_no_rendezvous_flags() -> None:
    from platforms.training import TrainSpec

    launch = AzureMLConfig.model_validate({"launch": {"gpus_per_node": 4}}).launch
    command = training_command(TrainSpec(name="t", data_dir="d", args={}), launch)
    assert "NODE_RANK" not in command and "--num_processes 4" in command


def test_an_image_environment_and_a_split_folder_export(tmp_path: Path) -> None:
    split = tmp_path / "split"
    split.mkdir()
    out = _export(
        tmp_path,
        ROOT / "configs" / "azureml.yaml",
        "--set",
        "azureml.environment={image: mcr.microsoft.com/azureml/curated/acft-hf-nlp-gpu:latest}",
        "--data",
        "azureml://datastores/workspaceblobstore/paths/datasets/split/abc/",
        "--model-version",
        "7",
        "--set",
        "azureml.endpoint.workers=3",
    )
    job = load_job(out / "job.yml")
    assert job.environment.image == "mcr.microsoft.com/azureml/curated/acft-hf-nlp-gpu:latest"
    assert (
        job.inputs["data"].path
        == "azureml://datastores/workspaceblobstore/paths/datasets/split/abc/"
    )
    deployment = load_online_deployment(out / "deployment.yml")
    assert deployment.model.endswith(":7")
    assert deployment.environment_variables["WORKER_COUNT"] == "3"


def test_bad_azureml_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match=r"azureml\.environment"):
        load_config(
            ROOT / "configs" / "azureml.yaml",
            ["azureml.environment={asset: azureml:env:1, image: python:3.11}"],
        )
    with pytest.raises(ConfigError, match=r"azureml\.launch\.launcher"):
        load_config(ROOT / "configs" / "azureml.yaml", ["azureml.launch.launcher=mpi"])
    with pytest.raises(ValueError, match="conda_file needs image"):
        EnvironmentConfig(asset="azureml:env:1", conda_file="conda.yml")


def test_workspace_ids_come_from_config_json_and_missing_ones_are_named(tmp_path: Path) -> None:
    config_json = tmp_path / "config.json"
    config_json.write_text(
        '{"subscription_id": "sub", "resource_group": "rg", "workspace_name": "ws"}'
    )
    assert WorkspaceConfig(config_file=str(config_json), workspace_name="other").resolved() == (
        "sub",
        "rg",
        "other",
    )
    with pytest.raises(ValueError, match=r"azureml\.workspace\.resource_group"):
        WorkspaceConfig(subscription_id="sub", workspace_name="ws").resolved()


@pytest.mark.slow
def test_a_dry_run_splits_the_data_here_and_exports_the_job_for_that_split(
    tmp_path: Path, prefect_api: None
) -> None:
    from tests.tickets import qa_tickets

    out = tmp_path / "dry-run"
    store = tmp_path / "store"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--config",
            str(ROOT / "configs" / "azureml.yaml"),
            "--input",
            str(qa_tickets(tmp_path)),
            "--approval",
            "auto",
            "--set",
            f"store={store}",
            "--set",
            "task=extractive-qa",
            "--set",
            "dask.n_workers=1",
            "--dry-run",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert not (store / "jobs").exists()  # nothing trained, nothing submitted
    [split] = (store / "datasets" / "split").iterdir()
    job = load_job(out / "job.yml")
    assert Path(job.inputs["data"].path) == split  # `az ml job create` uploads this folder
    assert job.name.startswith("train-")  # named by data and config, as a real run would
    assert load_online_deployment(out / "deployment.yml").endpoint_name == "tunegate-phi35"


@pytest.mark.parametrize(
    ("precision", "flag"), [("fp32", "no"), ("bf16", "bf16"), ("fp16", "fp16"), (None, None)]
)
def test_accelerate_launch_takes_the_configured_precision(
    precision: str | None, flag: str | None
) -> None:
    """Every accelerate config in trainer/configs/ says bf16; `--mixed_precision` overrides it
    with the config's precision. `auto` (unset) is resolved by the trainer on the node."""
    from platforms.training import TrainSpec

    launch = AzureMLConfig.model_validate({"launch": {"accelerate_config": "ddp"}}).launch
    args = {} if precision is None else {"precision": precision}
    command = training_command(TrainSpec(name="t", data_dir="d", args=args), launch)
    parsed = launch_command_parser().parse_args(shlex.split(command)[2:])
    assert parsed.mixed_precision == flag
    literals = {"precision": precision} if precision else {}
    assert parse_args(_trainer_argv(command, literals)).precision == (precision or "auto")


def test_the_t4_scenario_trains_in_fp32_under_a_bf16_accelerate_config(tmp_path: Path) -> None:
    out = _export(tmp_path, ROOT / "configs" / "azureml" / "t5-summarization-t4.yaml")
    words = _launcher_words(load_job(out / "job.yml").command)
    launch = launch_command_parser().parse_args(words[2:])
    accelerate_config = yaml.safe_load((out / "train-code" / launch.config_file).read_text())
    assert accelerate_config["mixed_precision"] == "bf16"  # what the flag overrides
    assert launch.mixed_precision == "no"
    assert parse_args(_job_argv(out / "job.yml")).precision == "fp32"

"""A big model's deployment and evaluation job: spread over the instance's GPUs, and 4-bit only
where bitsandbytes can be (azureml.endpoint.device_map, load_in_4bit; trainer/spread.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml
from azure.ai.ml import load_job, load_online_deployment
from typer.testing import CliRunner

from cli.main import app
from flows.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[2]
SCENARIO_70B = ROOT / "configs" / "azureml" / "llama3-70b-zero3.yaml"
OWN_IMAGES = [
    "azureml.endpoint.environment.image=myregistry.azurecr.io/serve-bnb:1",
    "azureml.environment.image=myregistry.azurecr.io/train-bnb:1",
]


def _export(tmp_path: Path, *overrides: str) -> Path:
    sets = [word for o in overrides for word in ("--set", o)]
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["azureml", "export", "-c", str(SCENARIO_70B), "--out", str(out), *sets]
    )
    assert result.exit_code == 0, result.output
    return out


def test_the_70b_deployment_and_its_evaluation_spread_over_the_nodes_gpus(
    tmp_path: Path,
) -> None:
    out = _export(tmp_path)
    deployment = load_online_deployment(out / "deployment.yml")
    assert deployment.instance_type == "Standard_ND96amsr_A100_v4"  # 8 x A100 80 GB
    variables = deployment.environment_variables
    assert (variables["TUNEGATE_DEVICE_MAP"], variables["TUNEGATE_LOAD_IN_4BIT"]) == ("auto", "0")
    evaluation = load_job(out / "evaluate-job.yml")
    assert yaml.safe_load((out / "evaluate-job.yml").read_text())["inputs"]["device_map"] == "auto"
    words = shlex.split(evaluation.command)
    assert words[words.index("--device-map") + 1] == "${{inputs.device_map}}"
    assert "--load-in-4bit" not in evaluation.command


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ([], "the tunegate-serving-gpu environment does not install bitsandbytes"),
        (OWN_IMAGES[:1], "the tunegate environment does not install bitsandbytes"),
        (
            ["azureml.endpoint.instance_type=Standard_DS3_v2", *OWN_IMAGES],
            "Standard_DS3_v2 has no GPU",
        ),
    ],
)
def test_4_bits_are_refused_where_they_cannot_load(overrides: list[str], words: str) -> None:
    with pytest.raises(ConfigError, match=r"azureml\.endpoint\.load_in_4bit") as refused:
        load_config(SCENARIO_70B, ["azureml.endpoint.load_in_4bit=true", *overrides])
    assert words in str(refused.value)


def test_4_bits_in_images_of_ones_own_reach_the_deployment_and_the_evaluation(
    tmp_path: Path,
) -> None:
    out = _export(tmp_path, "azureml.endpoint.load_in_4bit=true", *OWN_IMAGES)
    deployment = yaml.safe_load((out / "deployment.yml").read_text())
    assert deployment["environment_variables"]["TUNEGATE_LOAD_IN_4BIT"] == "1"
    assert "--load-in-4bit" in load_job(out / "evaluate-job.yml").command

"""A training job's base model on Azure ML: a model asset mounted as an input, or the hub.

- An Azure ML model asset (`azureml://registries/<registry>/models/<name>/versions/<v>` from the
  model catalog, `azureml:<name>:<version>` in the workspace) is the job's `base_model` input,
  mounted read-only. The trainer is still given the reference (`--model azureml://...`, so the
  trained model's `model_info.json` names its base portably) and the command maps it to the
  mount: `TUNEGATE_MODEL_MOUNTS='{"<reference>": "${{inputs.base_model}}"}'`, which the trainer
  reads (trainer/model_paths.py). The hub stays offline.
- A Hugging Face Hub id is downloaded by the job: HF_HUB_OFFLINE=0. A gated one needs a token:
  `azureml.job.hf_token` names a Key Vault secret or workspace connection that the job reads at
  its start with the compute's identity (platforms/azureml/hub_token.py), never a value.
- The packaged MiniLM ships in the environment: offline.

Input types: the model catalog's Hugging Face models are MLflow models (`type: mlflow_model` in
their azureml-assets specs: t5-base, mistralai-Mistral-7B-Instruct-v0-3, Phi-3.5-mini-instruct;
Meta-Llama-3-8B-Instruct of azureml-meta is used as an `mlflow_model` input in Azure's own
samples), so a registry reference is an `mlflow_model` input unless configured otherwise; a
workspace model has its own registered type (tunegate's own registrations are `custom_model`).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Literal

from azure.ai.ml import Input
from azure.ai.ml.constants import AssetTypes, InputOutputModes

from platforms.azureml.job_config import HubTokenConfig, JobConfig
from trainer.model_paths import MOUNTS_VARIABLE, is_model_asset

MODEL_INPUT = "base_model"
HUB_TOKEN_SCRIPT = "hub_token.py"
ModelType = Literal["mlflow_model", "custom_model"]

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_REGISTRY_MODEL = re.compile(
    rf"azureml://registries/{_NAME}/models/{_NAME}/(versions|labels)/{_NAME}"
)
_WORKSPACE_MODEL = re.compile(rf"azureml:{_NAME}(:{_NAME}|@{_NAME})")


def is_catalog_model(model: str) -> bool:
    """A model of an Azure ML registry (the model catalog), not of the workspace."""
    return model.startswith("azureml://registries/")


def is_local(model: str | None) -> bool:
    """Whether the job finds the model without the hub: mounted, or shipped in the environment
    (None: the task's packaged model)."""
    return model is None or model.startswith("packaged:") or is_model_asset(model)


def check_model(model: str | None) -> None:
    """A ValueError naming train.model for what an Azure ML job cannot load."""
    if model is None:
        return
    if is_model_asset(model):
        if not (_REGISTRY_MODEL.fullmatch(model) or _WORKSPACE_MODEL.fullmatch(model)):
            raise ValueError(
                f"train.model {model} is not an Azure ML model reference: use "
                "azureml://registries/<registry>/models/<name>/versions/<version> (the model "
                "catalog) or azureml:<name>:<version> (the workspace)"
            )
    elif Path(model).exists():
        raise ValueError(
            f"train.model {model} is a folder on this machine, which an Azure ML job cannot "
            f"read: register it (az ml model create --name <name> --version 1 --path {model} "
            "--type custom_model) and set train.model to azureml:<name>:1"
        )


def default_type(model: str, configured: str) -> ModelType:
    """The input type for `model` without asking the workspace: configured, else mlflow_model
    for the model catalog and custom_model for a workspace model."""
    if configured != "auto":
        return configured  # type: ignore[return-value]
    return "mlflow_model" if is_catalog_model(model) else "custom_model"


def model_input(model: str, model_type: ModelType) -> Input:
    """The mounted, read-only `base_model` input of a model asset."""
    asset_type = (
        AssetTypes.MLFLOW_MODEL if model_type == "mlflow_model" else AssetTypes.CUSTOM_MODEL
    )
    return Input(type=asset_type, path=model, mode=InputOutputModes.RO_MOUNT)


def mounts_assignment(model: str) -> str:
    """`TUNEGATE_MODEL_MOUNTS=...` for the command's start: the reference's mount folder."""
    mounts = json.dumps({model: "${{inputs." + MODEL_INPUT + "}}"})
    return f"{MOUNTS_VARIABLE}={shlex.quote(mounts)}"


def hub_token_words(token: HubTokenConfig) -> list[str]:
    """`python hub_token.py <where the secret is> --`, before the command it starts."""
    if token.key_vault_secret:
        source = ["--key-vault-secret", token.key_vault_secret]
    else:
        source = ["--connection", str(token.connection), "--connection-key", token.connection_key]
    return ["python", HUB_TOKEN_SCRIPT, *source, "--"]


def command_prefix(model: str | None, job: JobConfig) -> str:
    """What goes before the launcher in the job's command: the model mount's variable and the
    hub token's reader (each only when needed), with a trailing space; or nothing."""
    words = []
    if model is not None and is_model_asset(model):
        words.append(mounts_assignment(model))
    if job.hf_token is not None:
        words.append(shlex.join(hub_token_words(job.hf_token)))
    return "".join(w + " " for w in words)


def environment_variables(model: str | None, job: JobConfig) -> dict[str, str]:
    """The job's variables: offline unless the model comes from the hub, then the config's."""
    return {
        "PYTHONUNBUFFERED": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1" if is_local(model) else "0",
        **job.environment_variables,
    }

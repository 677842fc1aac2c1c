"""The training job's own settings (`azureml.job`): variables, the Hugging Face token's source
and the base model's input type; plain config that must never carry a secret itself.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Variables that carry a Hugging Face token: only ever set by the job itself (azureml.job.hf_token).
HUB_TOKEN_VARIABLES = frozenset({"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_TOKEN"})
_SECRET_NAME_PARTS = frozenset(
    {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "APIKEY", "CREDENTIAL", "CREDENTIALS", "SAS"}
)
_SECRET_VALUES = re.compile(
    r"hf_[A-Za-z0-9]{20,}"  # Hugging Face token
    r"|AccountKey=|SharedAccessSignature=|SharedAccessKey=|[?&]sig="  # storage keys, SAS
    r"|eyJ[\w-]{10,}\.[\w-]{10,}\."  # a JWT (bearer token)
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_|sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_VAULT_SECRET = re.compile(
    r"https://[a-z0-9-]+\.vault\.[a-z0-9.-]+/secrets/[A-Za-z0-9-]+(/\w+)?"
)


class HubTokenConfig(BaseModel):
    """Where the job reads its Hugging Face token (for gated hub models): a Key Vault secret or a
    workspace connection, read at the job's start with the compute's managed identity and set
    as HF_TOKEN in the trainer's environment only. Nothing here is the token itself."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    key_vault_secret: str | None = Field(
        None,
        description="The secret's identifier, https://<vault>.vault.azure.net/secrets/<name> "
        "(optionally /<version>); the compute's identity needs get permission on it (Key Vault "
        "Secrets User).",
    )
    connection: str | None = Field(
        None,
        description="A workspace connection holding the token (custom keys or API key); the "
        "compute's identity needs to list its secrets (e.g. AzureML Data Scientist).",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{2,32}$",
    )
    connection_key: str = Field(
        "HF_TOKEN", description="The key of a custom-keys connection that holds the token."
    )

    @model_validator(mode="after")
    def _one_source(self) -> HubTokenConfig:
        if bool(self.key_vault_secret) == bool(self.connection):
            raise ValueError("set one of key_vault_secret or connection")
        if self.key_vault_secret and not _KEY_VAULT_SECRET.fullmatch(self.key_vault_secret):
            raise ValueError(
                "key_vault_secret must be a secret identifier: "
                "https://<vault>.vault.azure.net/secrets/<name>[/<version>]"
            )
        return self


class JobConfig(BaseModel):
    """What the training job's processes get besides the trainer's flags."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    environment_variables: dict[str, str] = Field(
        default_factory=dict,
        description="Variables added to the job (they win over tunegate's, e.g. HF_HUB_OFFLINE). "
        "Plain config: no tokens, keys or passwords (use hf_token for the hub's).",
    )
    hf_token: HubTokenConfig | None = Field(
        None,
        description="Where the job reads HF_TOKEN for a gated Hugging Face model (none: no token).",
    )
    model_input_type: Literal["auto", "mlflow_model", "custom_model"] = Field(
        "auto",
        description="Input type of a train.model that is an Azure ML model asset. auto: "
        "mlflow_model for the model catalog (azureml://registries/...), the asset's own type "
        "for a workspace model (custom_model when exported without a workspace).",
    )

    @field_validator("environment_variables", mode="before")
    @classmethod
    def _as_text(cls, variables: Any) -> Any:
        """YAML scalars (`OMP_NUM_THREADS: 4`, `FLAG: true`) as the strings a process sees."""
        if not isinstance(variables, dict):
            return variables
        return {
            k: (str(v).lower() if isinstance(v, bool) else str(v))
            if isinstance(v, int | float | bool)
            else v
            for k, v in variables.items()
        }

    @field_validator("environment_variables")
    @classmethod
    def _no_secrets(cls, variables: dict[str, str]) -> dict[str, str]:
        for name, value in variables.items():
            if not _VARIABLE_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not an environment variable name")
            if name.upper() in HUB_TOKEN_VARIABLES:
                raise ValueError(
                    f"{name} is a Hugging Face token: never in plain config; set "
                    "azureml.job.hf_token (a Key Vault secret or workspace connection the job "
                    "reads at start)"
                )
            if _SECRET_NAME_PARTS & set(name.upper().split("_")):
                raise ValueError(
                    f"{name} looks like a secret's name: job variables are plain text in the job's "
                    "definition (the studio shows them); read secrets in the job from Key Vault"
                )
            if _SECRET_VALUES.search(value):
                raise ValueError(
                    f"the value of {name} looks like a token, key or signature: job variables are "
                    "plain text in the job's definition; read secrets in the job from Key Vault"
                )
        return variables

"""Config: YAML + overrides, every problem reported with its dotted field name."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.config import ConfigError, PipelineConfig, load_config

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_local_config_is_valid() -> None:
    config = load_config(ROOT / "configs" / "local.yaml")
    assert config.task.value == "extractive-qa"
    assert config.screen.rule("EMAIL_ADDRESS").action.value == "redact"
    assert config.screen.rule("AWS_ACCESS_KEY").action.value == "drop"


def test_overrides_apply_after_the_file() -> None:
    config = load_config(
        ROOT / "configs" / "local.yaml",
        ["screen.toxicity.threshold=0.95", "approval.mode=auto", "dask.address="],
    )
    assert config.screen.toxicity.threshold == 0.95
    assert config.approval.mode.value == "auto"
    assert config.dask.address is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["screen.toxicity.treshold=0.9"], "screen.toxicity.treshold: unknown field"),
        (["split.train=0.9"], "must sum to 1.0, got 1.1: set split.train=0.8 (the rest)"),
        (["split.test=0.3", "split.train=0.8"], "got 1.2: set split.train=0.6 (the rest)"),
        (
            ["screen.toxicity.threshold=2"],
            "screen.toxicity.threshold: Input should be less than or equal to 1",
        ),
        (
            ["approval.mode=sometimes"],
            "approval.mode: Input should be 'manual', 'auto' or 'auto-if-clean'",
        ),
        (
            ["screen.spacy_model=en_core_web_missing"],
            "screen.spacy_model: spaCy pipeline 'en_core_web_missing' is not installed",
        ),
        (["screen.entities={FOO: {action: redact}}"], "screen.entities: unknown entity ['FOO']"),
        (
            ["task=summarization", "split.group_key=context"],
            "split.group_key 'context' is not a text field",
        ),
        (["dask.n_workers=0"], "dask.n_workers: Input should be greater than or equal to 1"),
        (["rollout.workers=9"], "rollout.workers: Input should be less than or equal to 8"),
        (
            ["rollout.live.on_cannot_judge=hold"],
            "rollout.live.on_cannot_judge: Input should be 'rollback' or 'smoke-only'",
        ),
        (
            ["rollout.live.mirror_percent=60"],
            "rollout.live.mirror_percent: Input should be less than or equal to 50",
        ),
        (["train.learning_rate=5"], "train.learning_rate: Input should be less than 1"),
        (["train.args={lora_rank: 4}"], "train.args: unknown trainer argument(s) ['lora_rank']"),
        (
            ["train.model=azureml://registries/azureml/models/t5-base/versions/18"],
            "is an Azure ML model asset, which only an Azure ML job mounts",
        ),
        (
            ["azureml.job.environment_variables={HF_TOKEN: x}"],
            "HF_TOKEN is a Hugging Face token: never in plain config; set azureml.job.hf_token",
        ),
        (
            ["azureml.job.environment_variables={WANDB_API_KEY: abc}"],
            "WANDB_API_KEY looks like a secret's name",
        ),
        (
            ["azureml.job.environment_variables={HUB: hf_abcdefghijklmnopqrstuvwxyz0123}"],
            "the value of HUB looks like a token",
        ),
        (
            [
                "azureml.job.environment_variables={DATA: 'https://a.blob.core.windows.net/c?sv=1&sig=x'}"
            ],
            "the value of DATA looks like a token, key or signature",
        ),
        (["azureml.job.environment_variables={1X: y}"], "'1X' is not an environment variable"),
        (
            ["azureml.job.hf_token={key_vault_secret: https://kv.vault.azure.net/keys/k}"],
            "key_vault_secret must be a secret identifier",
        ),
        (
            [
                "azureml.job.hf_token={key_vault_secret: https://kv.vault.azure.net/secrets/hf,"
                " connection: huggingface}"
            ],
            "set one of key_vault_secret or connection",
        ),
        (["azureml.datastore=tune-gate"], "azureml.datastore: String should match pattern"),
    ],
)
def test_bad_values_name_the_field(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, overrides)
    assert message in str(info.value)


def test_bad_yaml_is_reported_with_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: [unclosed\n")
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(bad)


@pytest.mark.parametrize(
    "content", [b"\x89PNG\r\n\x1a\n\x00\x00", "task: r\u00e9sum\u00e9\n".encode("latin-1")]
)
def test_a_binary_or_non_utf8_config_is_an_error_not_a_traceback(
    tmp_path: Path, content: bytes
) -> None:
    """A binary file or a Latin-1 one given as the config: exit 2 naming the file (issue 27)."""
    from typer.testing import CliRunner

    from cli.main import app

    bad = tmp_path / "config.yaml"
    bad.write_bytes(content)
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_config(bad)
    result = CliRunner().invoke(app, ["config", "show", "-c", str(bad)])
    assert result.exit_code == 2 and "not UTF-8 text" in result.output
    assert "Traceback" not in result.output


def test_every_field_has_a_description_for_the_prefect_form() -> None:
    schema = PipelineConfig.model_json_schema()
    missing = []
    for name, definition in [("PipelineConfig", schema), *schema["$defs"].items()]:
        for field, spec in definition.get("properties", {}).items():
            if "description" not in spec and definition.get("type") == "object":
                missing.append(f"{name}.{field}")
    assert not missing, missing


def test_job_variables_that_are_not_secrets_pass_as_text() -> None:
    """YAML scalars become the strings a process sees; names merely containing TOKEN pass."""
    config = load_config(
        None,
        [
            "azureml.job.environment_variables={TOKENIZERS_PARALLELISM: true, OMP_NUM_THREADS: 4, "
            "NCCL_DEBUG: INFO}",
            "azureml.job.hf_token={connection: huggingface}",
        ],
    )
    assert config.azureml.job.environment_variables == {
        "TOKENIZERS_PARALLELISM": "true",
        "OMP_NUM_THREADS": "4",
        "NCCL_DEBUG": "INFO",
    }
    assert config.azureml.job.hf_token.connection_key == "HF_TOKEN"

"""A gated hub model's token: read by the job at its start with its identity (hub_token.py), from
a Key Vault secret or a workspace connection named in config; only the trainer's environment
holds it, never the job's definition, its command or its log."""

from __future__ import annotations

import io
import json
import os
import shlex
import urllib.error
from pathlib import Path
from typing import Any

import pytest
import yaml
from azure.ai.ml import load_job
from typer.testing import CliRunner

from cli.main import app
from platforms.azureml import hub_token

TOKEN = "hf_ThisIsTheGatedModelsTokenValue0123"
SECRET = "https://tunegate-kv.vault.azure.net/secrets/hf-token"
NODE = {
    "AZUREML_ARM_SUBSCRIPTION": "00000000-0000-0000-0000-000000000000",
    "AZUREML_ARM_RESOURCEGROUP": "rg",
    "AZUREML_ARM_WORKSPACE_NAME": "ws",
}


class FakeCredential:
    """What `DefaultAzureCredential` hands out on the node: a bearer token per scope."""

    def __init__(self) -> None:
        self.scopes: list[str] = []

    def get_token(self, scope: str) -> Any:
        self.scopes.append(scope)
        return type("AccessToken", (), {"token": f"bearer-for-{scope}"})()


class FakeHTTP:
    """`urlopen` answering one JSON body (or an HTTP error); the requests it got."""

    def __init__(self, answer: dict[str, Any] | None = None, status: int = 200) -> None:
        self.answer, self.status = answer or {}, status
        self.requests: list[Any] = []

    def __call__(self, request: Any, timeout: float) -> Any:
        self.requests.append(request)
        if self.status != 200:
            raise urllib.error.HTTPError(request.full_url, self.status, "Forbidden", {}, None)  # type: ignore[arg-type]
        return io.BytesIO(json.dumps(self.answer).encode())


def _run(argv: list[str], http: FakeHTTP, credential: FakeCredential) -> tuple[int, list]:
    started: list = []
    code = hub_token.main(
        argv,
        fetch=hub_token.http_fetch(credential, urlopen=http),
        execute=lambda file, args, env: started.append((file, args, env)),
    )
    return code, started


def test_the_key_vault_secret_becomes_hf_token_of_the_command_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    http, credential = FakeHTTP({"value": TOKEN, "id": SECRET}), FakeCredential()
    command = ["accelerate", "launch", "-m", "trainer.train", "--model", "meta-llama/x"]

    code, started = _run(["--key-vault-secret", SECRET, "--", *command], http, credential)

    assert code == 0
    [(file, args, env)] = started
    assert (file, args, env["HF_TOKEN"]) == ("accelerate", command, TOKEN)
    [request] = http.requests
    assert (request.get_method(), request.full_url) == ("GET", f"{SECRET}?api-version=7.4")
    assert credential.scopes == ["https://vault.azure.net/.default"]
    assert (
        request.get_header("Authorization") == "Bearer bearer-for-https://vault.azure.net/.default"
    )
    out = capsys.readouterr()
    assert TOKEN not in out.out + out.err and SECRET in out.out
    assert "HF_TOKEN" not in os.environ  # this process's own is untouched


@pytest.mark.parametrize(
    ("credentials", "key"),
    [({"keys": {"HF_TOKEN": TOKEN, "other": "x"}}, "HF_TOKEN"), ({"key": TOKEN}, "HF_TOKEN")],
    ids=["custom-keys", "api-key"],
)
def test_a_workspace_connection_of_the_job_s_workspace_gives_the_token(
    credentials: dict, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in NODE.items():
        monkeypatch.setenv(name, value)
    http = FakeHTTP({"properties": {"authType": "CustomKeys", "credentials": credentials}})
    credential = FakeCredential()

    code, [(_, _, env)] = _run(
        ["--connection", "huggingface", "--", "python", "-V"], http, credential
    )

    assert code == 0 and env["HF_TOKEN"] == TOKEN
    [request] = http.requests
    assert request.get_method() == "POST"
    assert request.full_url == (
        "https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/"
        "resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws/"
        "connections/huggingface/listsecrets?api-version=2024-10-01"
    )
    assert credential.scopes == ["https://management.azure.com/.default"]


def test_a_refused_read_fails_the_job_naming_the_secret_and_starts_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, started = _run(
        ["--key-vault-secret", SECRET, "--", "python", "-V"], FakeHTTP(status=403), FakeCredential()
    )
    assert (code, started) == (1, [])
    err = capsys.readouterr().err
    assert f"Key Vault secret {SECRET}" in err and "HTTP 403" in err
    for name in NODE:
        monkeypatch.delenv(name, raising=False)
    code, started = _run(["--connection", "hf1", "--", "true"], FakeHTTP(), FakeCredential())
    assert (code, started) == (1, []) and "not in an Azure ML job" in capsys.readouterr().err
    with_no_key = FakeHTTP({"properties": {"credentials": {"keys": {"other": "x"}}}})
    for name, value in NODE.items():
        monkeypatch.setenv(name, value)
    code, started = _run(["--connection", "hf1", "--", "true"], with_no_key, FakeCredential())
    assert (code, started) == (1, []) and "has no key 'HF_TOKEN'" in capsys.readouterr().err


def test_a_sovereign_cloud_vault_gets_its_own_scope() -> None:
    secret = "https://kv.vault.azure.cn/secrets/hf/0123abcd"
    assert hub_token.key_vault_scope(secret) == "https://vault.azure.cn/.default"


def test_the_exported_job_reads_the_token_at_start_and_holds_no_token(tmp_path: Path) -> None:
    config = {
        "task": "chat",
        "train": {"backend": "azureml", "model": "meta-llama/Meta-Llama-3-8B-Instruct"},
        "azureml": {
            "compute": {"size": "Standard_NC96ads_A100_v4"},
            "launch": {"instance_count": 2, "gpus_per_node": 4},
            "job": {"hf_token": {"key_vault_secret": SECRET}},
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["azureml", "export", "-c", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output

    job = load_job(out / "job.yml")
    assert job.environment_variables["HF_HUB_OFFLINE"] == "0"  # the hub, online
    assert "HF_TOKEN" not in job.environment_variables
    words = shlex.split(job.command)
    # hub_token.py (staged beside trainer/) starts the launcher, its own flags before `--`.
    assert words[:2] == ["python", "hub_token.py"]
    assert (out / job.code / "hub_token.py").read_text() == Path(hub_token.__file__).read_text()
    split = words.index("--")
    parsed = hub_token._parser().parse_args(words[2:split])
    assert parsed.key_vault_secret == SECRET
    assert words[split + 1 : split + 3] == ["accelerate", "launch"]
    assert "--machine_rank $NODE_RANK" in job.command  # the node's shell still expands it

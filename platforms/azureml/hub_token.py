"""Start an Azure ML job's command with HF_TOKEN read from a secret store by the job's identity.

Staged into the training job's code folder as `hub_token.py` when `azureml.job.hf_token` is set;
the job's command is then

    python hub_token.py --key-vault-secret https://<vault>.vault.azure.net/secrets/<name> -- CMD...
    python hub_token.py --connection <workspace connection> [--connection-key HF_TOKEN] -- CMD...

It reads the token with the compute's managed identity (`DefaultAzureCredential`: on a cluster
with a user-assigned identity, the one Azure ML names in DEFAULT_IDENTITY_CLIENT_ID), then
replaces itself with CMD (`exec`), HF_TOKEN added to CMD's environment only. The token is never
an argument, a job variable, a tag or a log line: the job's definition holds only where the
secret is. Only the standard library and azure-identity are imported (what the tunegate
environment has).

Key Vault: `GET {secret id}?api-version=7.4`, the value in `value` (Azure Key Vault REST,
"Get Secret"). Workspace connection: `POST .../workspaces/{ws}/connections/{name}/listsecrets`
on Azure Resource Manager, the token in `properties.credentials.keys[<key>]` (custom keys) or
`.key` (API key); the workspace is the job's own (AZUREML_ARM_SUBSCRIPTION,
AZUREML_ARM_RESOURCEGROUP, AZUREML_ARM_WORKSPACE_NAME, set on every node).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

KEY_VAULT_API = "7.4"
CONNECTIONS_API = "2024-10-01"
ARM = "https://management.azure.com"
VARIABLE = "HF_TOKEN"

# (method, url, scope) -> the JSON answer
Fetch = Callable[[str, str, str], dict[str, Any]]


class TokenError(RuntimeError):
    """The token could not be read; the message names where from, never a secret."""


def http_fetch(credential: Any, urlopen: Callable[..., Any] = urllib.request.urlopen) -> Fetch:
    """A `Fetch` over HTTPS with a bearer token of `credential` for each request's scope."""

    def fetch(method: str, url: str, scope: str) -> dict[str, Any]:
        token = credential.get_token(scope).token
        request = urllib.request.Request(
            url,
            method=method,
            data=b"" if method == "POST" else None,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        )
        try:
            with urlopen(request, timeout=60) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            where = url.split("?", 1)[0]
            raise TokenError(f"{method} {where}: HTTP {error.code} {error.reason}") from None

    return fetch


def key_vault_scope(secret_id: str) -> str:
    """The token scope of a vault: https://vault.azure.net for <name>.vault.azure.net (and the
    same suffix in other clouds, e.g. vault.azure.cn)."""
    host = urllib.parse.urlsplit(secret_id).hostname or ""
    suffix = host.split(".vault.", 1)[1] if ".vault." in host else "azure.net"
    return f"https://vault.{suffix}/.default"


def from_key_vault(secret_id: str, fetch: Fetch) -> str:
    answer = fetch("GET", f"{secret_id}?api-version={KEY_VAULT_API}", key_vault_scope(secret_id))
    value = answer.get("value")
    if not value:
        raise TokenError(f"Key Vault secret {secret_id} has no value")
    return str(value)


def connection_url(name: str, environ: dict[str, str]) -> str:
    """The listsecrets URL of workspace connection `name` in this job's workspace."""
    ids = [
        environ.get(v, "")
        for v in (
            "AZUREML_ARM_SUBSCRIPTION",
            "AZUREML_ARM_RESOURCEGROUP",
            "AZUREML_ARM_WORKSPACE_NAME",
        )
    ]
    if not all(ids):
        raise TokenError(
            "not in an Azure ML job: AZUREML_ARM_SUBSCRIPTION, AZUREML_ARM_RESOURCEGROUP and "
            "AZUREML_ARM_WORKSPACE_NAME name the workspace of the connection"
        )
    subscription, group, workspace = (urllib.parse.quote(i, safe="") for i in ids)
    return (
        f"{ARM}/subscriptions/{subscription}/resourceGroups/{group}/providers/"
        f"Microsoft.MachineLearningServices/workspaces/{workspace}/connections/"
        f"{urllib.parse.quote(name, safe='')}/listsecrets?api-version={CONNECTIONS_API}"
    )


def from_connection(name: str, key: str, fetch: Fetch, environ: dict[str, str]) -> str:
    answer = fetch("POST", connection_url(name, environ), f"{ARM}/.default")
    credentials = (answer.get("properties") or {}).get("credentials") or {}
    value = (credentials.get("keys") or {}).get(key) or credentials.get("key")
    if not value:
        raise TokenError(
            f"workspace connection {name} has no key {key!r} (custom keys) nor an API key"
        )
    return str(value)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python hub_token.py", description="Run a command with HF_TOKEN from a secret store."
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--key-vault-secret", help="https://<vault>.vault.azure.net/secrets/<name>")
    source.add_argument("--connection", help="A workspace connection's name.")
    parser.add_argument("--connection-key", default=VARIABLE, help="Key of a custom-keys one.")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run.")
    return parser


def _credential() -> Any:
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential(
        managed_identity_client_id=os.environ.get("DEFAULT_IDENTITY_CLIENT_ID"),
        exclude_interactive_browser_credential=True,
    )


def main(
    argv: list[str] | None = None,
    fetch: Fetch | None = None,
    execute: Callable[[str, list[str], dict[str, str]], Any] = os.execvpe,
) -> int:
    args = _parser().parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("hub_token.py: no command after --", file=sys.stderr)
        return 2
    environ = dict(os.environ)
    source = (
        f"Key Vault secret {args.key_vault_secret}"
        if args.key_vault_secret
        else f"workspace connection {args.connection}"
    )
    try:
        fetch = fetch or http_fetch(_credential())
        if args.key_vault_secret:
            token = from_key_vault(args.key_vault_secret, fetch)
        else:
            token = from_connection(args.connection, args.connection_key, fetch, environ)
    except Exception as error:  # noqa: BLE001 - one message for the job's log, no secret in it
        print(
            f"hub_token.py: could not read {VARIABLE} from the {source} with the job's identity "
            f"({type(error).__name__}: {error}); the compute cluster needs a managed identity "
            "allowed to read it",
            file=sys.stderr,
        )
        return 1
    print(f"hub_token.py: {VARIABLE} set from the {source}", flush=True)
    execute(command[0], command, {**environ, VARIABLE: token})
    return 0


if __name__ == "__main__":
    sys.exit(main())

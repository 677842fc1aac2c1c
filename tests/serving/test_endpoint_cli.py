"""`tunegate endpoint`: help everywhere, status and invoke against a running endpoint."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.main import app
from serving.client import RunningEndpoint

runner = CliRunner()


@pytest.mark.parametrize("command", [[], ["serve"], ["status"], ["invoke"], ["traffic"]])
def test_every_command_has_help(command: list[str]) -> None:
    result = runner.invoke(app, ["endpoint", *command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output and len(result.output.splitlines()) > 4


def _key_file(running: RunningEndpoint) -> str:
    return str(running.settings.key_file)


def test_status_and_invoke(running: RunningEndpoint) -> None:
    where = ["--url", running.url, "--key-file", _key_file(running)]
    status = runner.invoke(app, ["endpoint", "status", *where], env={"COLUMNS": "160"})
    assert status.exit_code == 0, status.output
    assert "blue" in status.output and "green" in status.output
    request = json.dumps({"question": "Who?", "context": "Ana fixed the printer."})
    invoked = runner.invoke(app, ["endpoint", "invoke", request, *where, "--deployment", "green"])
    assert invoked.exit_code == 0, invoked.output
    assert '"answer"' in invoked.output
    broken = runner.invoke(app, ["endpoint", "invoke", '{"question": "Who?"}', *where])
    assert broken.exit_code == 1 and "missing field 'context'" in broken.output


def test_unreachable_endpoint_says_what_to_do(running: RunningEndpoint) -> None:
    result = runner.invoke(
        app, ["endpoint", "status", "--url", "http://127.0.0.1:9", "--key-file", _key_file(running)]
    )
    assert result.exit_code == 2 and "tunegate endpoint serve" in result.output


def test_the_url_defaults_to_the_endpoint_a_rollout_started(
    running: RunningEndpoint, tmp_path
) -> None:
    (tmp_path / "server.json").write_text(json.dumps({"url": running.url, "port": 0, "pid": 0}))
    where = ["--state-dir", str(tmp_path), "--key-file", _key_file(running)]
    status = runner.invoke(app, ["endpoint", "status", *where], env={"COLUMNS": "160"})
    assert status.exit_code == 0, status.output
    assert running.url in status.output and "blue" in status.output

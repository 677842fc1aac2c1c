"""`tunegate endpoint`: help everywhere, status and invoke against a running endpoint, list and
stop of the detached endpoint a rollout leaves running."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from serving.client import RunningEndpoint

runner = CliRunner()


@pytest.mark.parametrize(
    "command", [[], ["serve"], ["status"], ["invoke"], ["traffic"], ["list"], ["stop"]]
)
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


def _children(pid: int) -> set[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return {int(p) for p in found.stdout.split()}


@pytest.mark.slow
def test_stop_ends_a_models_endpoint_and_its_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44 item 5: endpoints kept running after their runs, with no command to stop them."""
    from platforms.endpoint import ensure_local_endpoint, stop_local_endpoint
    from platforms.locks import process_alive

    monkeypatch.setenv("TUNEGATE_COLLECT", "1")  # as a user's endpoint collects (conftest: 0)
    store = tmp_path / "store"
    state = store / "endpoints" / "helpdesk-qa"
    url, _ = ensure_local_endpoint(state)
    try:
        pid = json.loads((state / "server.json").read_text())["pid"]
        deadline = time.monotonic() + 60
        while not _children(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        [collector] = _children(pid)  # python -m serving.collect
        assert "serving.collect" in Path(f"/proc/{collector}/cmdline").read_text()
        where = ["--store", str(store)]
        listed = runner.invoke(app, ["endpoint", "list", *where], env={"COLUMNS": "200"})
        assert listed.exit_code == 0, listed.output
        assert "helpdesk-qa" in listed.output and f"running (pid {pid})" in listed.output
        assert url in listed.output

        stopped = runner.invoke(app, ["endpoint", "stop", "--model", "helpdesk-qa", *where])
        assert stopped.exit_code == 0, stopped.output
        assert f"stopped the endpoint of helpdesk-qa (pid {pid})" in stopped.output
        assert not process_alive(pid) and not process_alive(collector)
        listed = runner.invoke(app, ["endpoint", "list", *where], env={"COLUMNS": "200"})
        assert "stopped" in listed.output and "running" not in listed.output
        again = runner.invoke(app, ["endpoint", "stop", *where])  # the store's only endpoint
        assert again.exit_code == 0 and "was not running" in again.output
        unknown = runner.invoke(app, ["endpoint", "stop", "--model", "other", *where])
        assert unknown.exit_code == 2 and "endpoints: helpdesk-qa" in unknown.output
    finally:
        stop_local_endpoint(state)

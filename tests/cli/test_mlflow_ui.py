"""`tunegate ui`: MLflow's UI on the store's tracked runs and registered models, in a real headless
Chromium (Debian's, driven by playwright as in tests/flows/test_ui_approval.py).

The runs and the registered model are made directly through MLflow's client on a temp store (no
training); the pages are checked by their text (run names, parameters, alias names) and kept as
screenshots under the test's tmp_path.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cli.ui import ui_url
from platforms import tracking
from tests.flows.test_ui_approval import page  # noqa: F401 (the Chromium page fixture)

pytestmark = pytest.mark.slow

MODEL = "tunegate-extractive-qa"
ML_VIEW = "?workflowType=machine_learning"
ROOT = Path(__file__).resolve().parents[2]


def _two_runs_and_a_champion(store: Path) -> tuple[str, list[str]]:
    """Two finished runs of MODEL (learning rates 0.002 and 0.0005), each registered as a
    version; `challenger` on the first, `champion` on the second. (experiment id, run ids)"""
    uri, root = tracking.ensure_local_database(store), tracking.local_artifact_root(store)
    runs = []
    for rate, f1 in (("0.002", 58.8), ("0.0005", 71.2)):
        run = tracking.start_run(uri, MODEL, f"retrain-lr-{rate}", None, {}, root)
        run.log_params({"train.learning_rate": rate, "train.epochs": 4})
        run.log_metrics({"base.f1": 6.1, "candidate.f1": f1, "gate.passed": True})
        run.log_curve("loss", [(10 * s, 3.0 / s) for s in range(1, 11)])
        run.end("FINISHED")
        runs.append(run)
    client = tracking.client(uri)
    client.create_registered_model(MODEL)
    versions = [
        client.create_model_version(
            MODEL, f"{client.get_run(r.run_id).info.artifact_uri}/model", run_id=r.run_id
        )
        for r in runs
    ]
    client.set_registered_model_alias(MODEL, "challenger", versions[0].version)
    client.set_registered_model_alias(MODEL, "champion", versions[1].version)
    return runs[0].experiment_id, [r.run_id for r in runs]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def test_tunegate_ui_compares_two_runs_and_shows_the_model_s_aliases(
    page,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect

    store = tmp_path / "store"
    experiment, run_ids = _two_runs_and_a_champion(store)
    port = _free_port()
    ui = subprocess.Popen(
        [sys.executable, "-m", "cli", "ui", "--set", f"store={store}", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while not _answers(url):
            assert ui.poll() is None, ui.stdout.read() if ui.stdout else ""
            assert time.monotonic() < deadline, "tunegate ui did not answer in 120 s"
            time.sleep(0.5)

        # The experiment (one per model name) lists both runs, in the "Model training" view
        # the printed address opens.
        assert ui_url("127.0.0.1", port).endswith(ML_VIEW)
        page.goto(f"{url}/#/experiments/{experiment}{ML_VIEW}")
        for name in ("retrain-lr-0.002", "retrain-lr-0.0005"):
            expect(page.get_by_text(name).first).to_be_visible()
        page.screenshot(path=tmp_path / "experiment.png")

        # The two runs side by side: parameters and metrics.
        page.goto(f"{url}/#/compare-runs?runs={_json(run_ids)}&experiments={_json([experiment])}")
        body = page.locator("body")
        expect(body).to_contain_text("Comparing 2 Runs")
        for text in ("retrain-lr-0.002", "retrain-lr-0.0005", "train.learning_rate", "0.0005"):
            expect(body).to_contain_text(text)
        expect(body).to_contain_text("candidate.f1")
        page.screenshot(path=tmp_path / "compare.png", full_page=True)

        # The registered model: its versions with their aliases.
        page.goto(f"{url}/#/models/{MODEL}")
        expect(body).to_contain_text("Version 2")
        for alias in ("champion", "challenger"):
            expect(body).to_contain_text(f"@ {alias}")
        page.screenshot(path=tmp_path / "model.png")
    finally:
        ui.send_signal(signal.SIGTERM)  # stops the server it started, too
        ui.wait(timeout=60)
    assert not _answers(url)
    assert {p.name for p in tmp_path.glob("*.png")} == {
        "experiment.png",
        "compare.png",
        "model.png",
    }


def _json(values: list[str]) -> str:
    return "[" + ",".join(f'"{v}"' for v in values) + "]"

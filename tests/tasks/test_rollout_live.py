"""Canary steps judged on live traffic (tasks/canary_live.py through tasks/rollout.py): a real
local endpoint over HTTP (in a thread of this process) that collects its traffic, masked, with
the screen's masker; users played by a thread sending requests while the rollout runs.

The failing challenger is a real defect, not an injected one: `qa_model_dir` saved with a
tokenizer that claims 2048 positions while the model has 512. Short requests (the smoke samples)
are answered as the champion answers them; a long one is read as one window longer than the
model's position table and fails with a 500.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from platforms.endpoint import LocalEndpointBackend
from platforms.lineage import Lineage
from platforms.model_version import ModelVersion
from platforms.registry import MlflowRegistry
from serving.client import EndpointClient, EndpointError, RunningEndpoint, serve_in_thread
from serving.collect import COLLECTED, read_records
from serving.server import ServerSettings
from tasks.canary_live import LiveCanaryConfig
from tasks.rollout import RolloutConfig, run_rollout, timeline_markdown

MASKER = "screening.outputs:traffic_masker"
ENTITIES = frozenset({"EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD"})
CONTEXT = "The VPN token for the Porto office was reset; the outage lasted 3 days."
SHORT = {"question": "Which office was affected?", "context": CONTEXT}
# ~720 tokens: two 512-token windows for the champion, one too long for the challenger
LONG = {"question": "How long did the outage last?", "context": " ".join([CONTEXT] * 40)}
# the collector's writer is niced: on a busy machine its records come late, so the window waits
LIVE = LiveCanaryConfig(min_requests=6, wait_seconds=90, p95_allowance_ms=2000)
POLICY = RolloutConfig(
    steps=[50, 100],
    hold_requests=4,
    min_requests=2,
    hold_seconds=30,
    max_p95_ratio=10,  # the replayed half's latency is test_rollout's; here, the live window
    p95_allowance_ms=2000,
    live=LIVE,
)


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[tuple[RunningEndpoint, LocalEndpointBackend]]:
    state = tmp_path / "state"
    # one request per model call: a micro-batch fails as a whole, so a user's long request would
    # fail a replayed short one batched with it, and the replayed half would catch it instead
    settings = ServerSettings(key_file=tmp_path / "key", state_dir=state, max_batch_size=1)
    with serve_in_thread(settings, masker=MASKER) as running:
        backend = LocalEndpointBackend(running.url, settings.key_file, collected=state / COLLECTED)
        yield running, backend
        backend.close()


@pytest.fixture(scope="module")
def long_inputs_break(qa_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`qa_model_dir` with a tokenizer that reads up to 2048 tokens into a 512-position model."""
    broken = tmp_path_factory.mktemp("long-inputs-break") / "model"
    shutil.copytree(qa_model_dir, broken)
    config = broken / "tokenizer_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "model_max_length": 2048}))
    return broken


@contextmanager
def users(running: RunningEndpoint, requests: list[dict]) -> Iterator[list[int]]:
    """A thread sending `requests` in turn to the endpoint as its users do (routed by its traffic
    weights, with the scoring key) until the block ends; yields the statuses it got."""
    statuses: list[int] = []
    stop = threading.Event()

    def send() -> None:
        client, i = EndpointClient(running.url, running.score_key, timeout=60), 0
        while not stop.is_set():
            try:
                client.score(requests[i % len(requests)])
                statuses.append(200)
            except EndpointError as exc:
                statuses.append(exc.status)
            i += 1
            time.sleep(0.05)
        client.close()

    thread = threading.Thread(target=send, name="users", daemon=True)
    thread.start()
    try:
        yield statuses
    finally:
        stop.set()
        thread.join(60)


def _challenger(
    backend: LocalEndpointBackend, champion: Path, challenger: Path, samples, tmp_path: Path
) -> tuple[MlflowRegistry, ModelVersion]:
    """A registry whose version 1 (`champion`) serves alone at 100%, and its version 2."""
    registry = MlflowRegistry.local(tmp_path / "store")
    v1 = registry.register("qa", champion, {}, Lineage())
    v2 = registry.register("qa", challenger, {}, Lineage())
    assert (
        run_rollout(backend, registry, v1, "extractive-qa", samples, POLICY).outcome == "promoted"
    )
    return registry, v2


@pytest.mark.slow
def test_a_challenger_that_errors_on_live_traffic_rolls_back_though_its_smoke_test_passed(
    endpoint, qa_model_dir: Path, long_inputs_break: Path, samples, tmp_path: Path
) -> None:
    running, backend = endpoint
    registry, v2 = _challenger(backend, qa_model_dir, long_inputs_break, samples, tmp_path)

    with users(running, [LONG, SHORT]) as statuses:
        record = run_rollout(backend, registry, v2, "extractive-qa", samples, POLICY, ENTITIES)

    assert record.outcome == "rolled-back", record.events
    assert [e.action for e in record.events] == ["deploy", "canary 50%", "rollback"]
    step = record.events[1]
    assert step.decision is not None and step.decision.step == "proceed"  # the replay passed
    assert step.decision.candidate.errors == 0
    live = step.live
    assert live is not None and live.verdict == "fail"
    assert live.challenger is not None and live.champion is not None
    assert live.challenger.health.requests >= LIVE.min_requests
    assert live.challenger.health.errors > 0 and live.champion.health.errors == 0
    assert "live: challenger error rate" in record.events[-1].message
    assert 500 in statuses  # users did get the challenger's failures while the step held
    assert record.endpoint["traffic"] == {"blue": 100}
    assert record.endpoint["deployments"] == {"blue": "qa:1"}
    assert registry.alias("qa", "champion").version == 1
    table = timeline_markdown(record)  # the rollout's Prefect artifact
    assert "| live window |" in table and "fail: " in table
    [line] = record.live_windows()  # the run summary's
    assert line.startswith("canary 50%: fail: ")
    assert f"5xx {live.challenger.health.error_rate:.3f} vs 0.000" in line


@pytest.mark.slow
def test_a_healthy_challenger_advances_on_live_traffic(
    endpoint, qa_model_dir: Path, samples, tmp_path: Path
) -> None:
    running, backend = endpoint
    registry, v2 = _challenger(backend, qa_model_dir, qa_model_dir, samples, tmp_path)

    with users(running, [LONG, SHORT]):
        record = run_rollout(backend, registry, v2, "extractive-qa", samples, POLICY, ENTITIES)

    assert record.outcome == "promoted", record.events
    steps = [e for e in record.events if e.action.startswith("canary")]
    assert [e.action for e in steps] == ["canary 50%", "canary 100%"]
    for step in steps:
        assert step.live is not None and step.live.verdict == "pass", step.message
        assert step.live.challenger is not None
        assert step.live.challenger.health.requests >= LIVE.min_requests
        assert step.live.challenger.median_score is not None  # QA answers carry scores
    half, full = steps[0].live, steps[1].live
    assert half is not None and half.champion is not None and half.champion.health.requests > 0
    # at 100% the rollout still replayed to the champion by name, and users reached it no more
    # (at most a request routed before the step, answered in it): the named requests are not in
    # its live side
    assert full is not None and full.champion is not None and steps[1].decision is not None
    assert full.champion.health.requests < steps[1].decision.live.requests
    assert registry.alias("qa", "champion").version == 2


@pytest.mark.parametrize("action", ["rollback", "smoke-only"])
@pytest.mark.slow
def test_a_window_without_live_traffic_waits_then_cannot_judge(
    endpoint, qa_model_dir: Path, samples, tmp_path: Path, action: str
) -> None:
    _, backend = endpoint
    registry, v2 = _challenger(backend, qa_model_dir, qa_model_dir, samples, tmp_path)
    live = LIVE.model_copy(update={"wait_seconds": 3.0, "on_cannot_judge": action})
    policy = POLICY.model_copy(update={"steps": [100], "live": live})

    started = time.monotonic()
    record = run_rollout(backend, registry, v2, "extractive-qa", samples, policy)
    assert time.monotonic() - started >= live.wait_seconds  # it waited for users first

    step = next(e for e in record.events if e.action == "canary 100%")
    assert step.live is not None and step.live.verdict == "cannot-judge"
    assert step.live.challenger is not None and step.live.challenger.health.requests == 0
    assert "fewer than rollout.live.min_requests (6)" in step.message
    if action == "rollback":
        assert record.outcome == "rolled-back"
        assert "cannot judge the live window: rolled back" in record.events[-1].message
        assert registry.alias("qa", "champion").version == 1
    else:  # advanced, and the record says on what
        assert record.outcome == "promoted"
        assert "advanced on the replayed requests alone" in step.message


@pytest.mark.slow
def test_a_mirrored_shadow_step_catches_the_failing_challenger_before_any_user_sees_it(
    endpoint, qa_model_dir: Path, long_inputs_break: Path, samples, tmp_path: Path
) -> None:
    running, backend = endpoint
    registry, v2 = _challenger(backend, qa_model_dir, long_inputs_break, samples, tmp_path)
    policy = POLICY.model_copy(update={"live": LIVE.model_copy(update={"mirror_percent": 50})})

    with users(running, [LONG, SHORT]) as statuses:
        record = run_rollout(backend, registry, v2, "extractive-qa", samples, policy, ENTITIES)

    assert [e.action for e in record.events] == ["deploy", "shadow 50%", "rollback"]
    shadow = record.events[1].live
    assert shadow is not None and shadow.verdict == "fail"
    assert shadow.challenger is not None and shadow.challenger.health.errors > 0
    assert set(statuses) == {200}  # every user was answered by the champion
    mirrored = [r for r in read_records(backend.collected) if r.get("routed") == "mirror"]
    assert mirrored and {r["deployment"] for r in mirrored} == {"green"}
    assert record.endpoint["traffic"] == {"blue": 100}
    assert backend.status().traffic.mirror_traffic == {}

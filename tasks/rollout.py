"""rollout: blue/green with canary steps on an online endpoint, automatic rollback, repair.

The new version goes to the idle colour at 0% traffic, must answer the evaluation's smoke
samples as the offline evaluation did (within a token-F1 tolerance), then takes the canary steps of the policy. After each step
is held, `decide_rollout_step` compares it with the live deployment; on `rollback` traffic goes
back to 100% on the live deployment and the new one is deleted (aliases untouched); after the
last step the `champion` alias moves to the new version and the old deployment, now at 0%, is
deleted. A local endpoint has no users, so the stage replays the smoke requests as traffic while
a step is held (`replay`). Every action is an event in the `RolloutRecord`.

Each model name has its own endpoint (`Backends.open_endpoint(name)`); a rollout, repair or
manual rollback refuses an endpoint that serves another model's deployments, never deleting or
canarying against them.
"""

from __future__ import annotations

import itertools
import logging
import time
from datetime import UTC, datetime
from typing import Any, Literal

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field

from platforms.backends import Backends, PlatformKind
from platforms.endpoint import EndpointBackend, check_own
from platforms.model_version import ModelRegistry, ModelVersion
from serving.client import EndpointError
from serving.metrics import MetricsSnapshot, interval_percentile
from tasks.rollout_policy import (
    DeploymentHealth,
    RolloutPolicy,
    Step,
    StepDecision,
    decide_rollout_step,
)
from trainer.metrics.scores import token_f1
from trainer.taskspec import task_spec

COLOURS = ("blue", "green")
log = logging.getLogger(__name__)


class RolloutConfig(RolloutPolicy):
    """How new versions reach the endpoint."""

    backend: PlatformKind = Field(
        PlatformKind.local,
        description="local: the endpoint in serving/; azureml: the managed online endpoint of "
        "the azureml section.",
    )
    port: int = Field(0, ge=0, le=65535, description="Local endpoint port (0: a free one).")
    workers: int = Field(
        1,
        ge=1,
        le=8,
        description="Local endpoint: scoring processes per deployment, each with its own copy of "
        "the model (1: scored in the server process). During a rollout two deployments run.",
    )
    replay: bool = Field(
        True, description="Replay the smoke requests as traffic while a step is held."
    )
    smoke_min_agreement: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Share of smoke answers that must agree with the offline evaluation's "
        "(each agreeing when its token F1 reaches smoke_min_similarity).",
    )
    smoke_min_similarity: float = Field(
        0.6,
        ge=0,
        le=1,
        description="Token F1 (SQuAD's normalisation) between a smoke answer and the evaluation's "
        "at which it agrees: 1 asks for the same words. The evaluation job generated on the GPU "
        "in the endpoint's dtype, yet another batch shape can turn a long reply's greedy path; a "
        "different model shares few words.",
    )


class RolloutEvent(BaseModel):
    model_config = ConfigDict(frozen=True)
    at: str
    action: str
    traffic: dict[str, int]
    message: str = ""
    decision: StepDecision | None = None


class RolloutRecord(BaseModel):
    """What the rollout did, step by step, and where it left the endpoint."""

    model_config = ConfigDict(frozen=True)
    version: str
    outcome: Literal["promoted", "rolled-back", "unchanged"]
    new_deployment: str | None
    previous_deployment: str | None
    events: list[RolloutEvent]
    endpoint: dict[str, Any]


class Timeline:
    """The rollout's events in order, each stamped with the time it happened."""

    def __init__(self) -> None:
        self.events: list[RolloutEvent] = []

    def add(self, action: str, traffic: dict[str, int], message: str = "", **kw: Any) -> None:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        shares = ", ".join(f"{k} {v}%" for k, v in traffic.items())
        log.info("rollout: %s (%s)%s", action, shares, f": {message}" if message else "")
        self.events.append(
            RolloutEvent(at=at, action=action, traffic=traffic, message=message, **kw)
        )


def _idle_colour(live: str | None) -> str:
    """The colour a new version goes to: whichever the live deployment is not."""
    return COLOURS[1] if live == COLOURS[0] else COLOURS[0]


def label(version: ModelVersion) -> str:
    return f"{version.name}:{version.version}"


def repair(backend: EndpointBackend, champion: ModelVersion | None, timeline: Timeline) -> None:
    """Leave the endpoint serving only what passed its checks: the champion's deployment, or a
    deployment alone at 100% (one gets there only after its smoke test and every canary step);
    anything else a crash left behind is deleted, never promoted.

    A crash in the middle of a rollout can leave traffic split between two colours, a deployment
    at 0% beside the live one, or a first deployment at 0% that never passed its smoke test; all
    are undone here before anything else happens (the rollout then runs its checks again).
    """
    status = backend.status()
    traffic = {d.name: d.traffic for d in status.deployments}
    if not traffic:
        return
    versions = {d.name: d.version for d in status.deployments}
    alone = len(traffic) == 1 and next(iter(traffic.values())) == 100
    if alone and not any(d.mirror_traffic for d in status.deployments):
        return
    wanted = champion and next((n for n, v in versions.items() if v == label(champion)), None)
    keep = wanted or (next(iter(traffic)) if alone else None)
    if keep is not None:
        backend.set_traffic({n: 100 if n == keep else 0 for n in traffic})
    for name in traffic:
        if name != keep:
            backend.delete(name)
    kept = f"{keep} kept" if keep else "nothing there had passed its checks: all deleted"
    timeline.add(
        "repair", {keep: 100} if keep else {}, f"half-done state {traffic} repaired: {kept}"
    )


def run_rollout(
    backend: EndpointBackend,
    registry: ModelRegistry,
    version: ModelVersion,
    task_type: str,
    samples: list[dict[str, Any]],
    policy: RolloutConfig,
) -> RolloutRecord:
    """Deploy `version` beside the live deployment and shift traffic to it, or roll back."""
    timeline = Timeline()
    check_own(backend.status(), version.name, backend.url)
    repair(backend, registry.alias(version.name, "champion"), timeline)
    status = backend.status()
    live = next((d for d in status.deployments if d.traffic == 100), None)
    if live is not None and live.version == label(version):
        champion = registry.alias(version.name, "champion")
        if champion is not None and champion.version == version.version:
            timeline.add("unchanged", {live.name: 100}, f"{label(version)} already serves")
            return _record(backend, version, "unchanged", None, live.name, timeline)
        # alone at 100%, it passed its checks; a crash came before the alias moved
        registry.set_alias(version.name, "champion", version.version)
        timeline.add("promote", {live.name: 100}, f"champion is now {label(version)} (resumed)")
        return _record(backend, version, "promoted", live.name, None, timeline)

    registry.verify(version)  # files not as registered: refused before any traffic moves
    new = _idle_colour(live and live.name)
    backend.deploy(new, version.path, label(version))
    current = {live.name: 100, new: 0} if live else {new: 0}
    timeline.add("deploy", current, f"{label(version)} on {new} at 0%")

    mismatch = smoke_check(backend, new, task_type, samples, policy)
    if mismatch:
        return _roll_back(backend, version, new, live and live.name, mismatch, timeline)

    if live is None:
        backend.set_traffic({new: 100})
        timeline.add("first deployment", {new: 100}, "no live deployment: 100% at once")
    else:
        for percent in policy.steps:
            traffic = {new: percent, live.name: 100 - percent}
            backend.set_traffic(traffic)
            breaches = 0
            while True:
                candidate, baseline = _hold(backend, new, live.name, samples, policy)
                decision = decide_rollout_step(candidate, baseline, policy, breaches)
                timeline.add(
                    f"canary {percent}%", traffic, "; ".join(decision.reasons), decision=decision
                )
                if decision.step is not Step.hold_again:
                    break
                breaches += 1
            if decision.step is Step.rollback:
                return _roll_back(backend, version, new, live.name, decision.reasons, timeline)
        backend.delete(live.name)
        timeline.add("retire", {new: 100}, f"{live.name} ({live.version}) deleted at 0%")
    registry.set_alias(version.name, "champion", version.version)
    timeline.add("promote", {new: 100}, f"champion is now {label(version)}")
    return _record(backend, version, "promoted", new, live and live.name, timeline)


def roll_back_to_previous(
    backend: EndpointBackend, registry: ModelRegistry, name: str
) -> RolloutRecord:
    """By hand: serve the previous champion at 100% at once and move the alias back to it."""
    timeline = Timeline()
    current = registry.alias(name, "champion")
    target = registry.previous(name, "champion")
    if target is None:
        raise ValueError(f"{name} has no previous champion to roll back to")
    check_own(backend.status(), name, backend.url)
    repair(backend, current, timeline)
    registry.verify(target)
    live = next((d for d in backend.status().deployments if d.traffic == 100), None)
    new = _idle_colour(live and live.name)
    backend.deploy(new, target.path, label(target))
    backend.set_traffic({new: 100, **({live.name: 0} if live else {})})
    if live is not None:
        backend.delete(live.name)
    registry.set_alias(name, "champion", target.version)
    timeline.add("manual rollback", {new: 100}, f"champion is {label(target)} again")
    return _record(backend, target, "rolled-back", new, live and live.name, timeline)


def smoke_check(
    backend: EndpointBackend,
    deployment: str,
    task_type: str,
    samples: list[dict[str, Any]],
    policy: RolloutConfig,
) -> list[str]:
    """Reasons the new deployment failed its smoke test (empty when it passed): fewer than
    `smoke_min_agreement` of its answers reach `smoke_min_similarity` token F1 against the
    answers the evaluation made (for a generative task, the evaluation job's on the GPU, in the
    endpoint's dtype)."""
    if not samples:
        return []
    key, similarities = task_spec(task_type).response_key, []
    for sample in samples:
        try:
            answer = backend.score(sample["request"], deployment).body.get(key, "")
        except EndpointError as exc:
            return [f"smoke request failed on {deployment}: {exc}"]
        similarities.append(token_f1(str(answer), str(sample["expected"])))
    agree = sum(s >= policy.smoke_min_similarity for s in similarities)
    if agree < policy.smoke_min_agreement * len(samples):
        mean = sum(similarities) / len(similarities)
        return [
            f"smoke test: {agree}/{len(samples)} answers agree with the offline evaluation "
            f"(token F1 >= {policy.smoke_min_similarity}; mean {mean:.2f}, "
            f"{policy.smoke_min_agreement:.0%} must agree)"
        ]
    return []


def _hold(
    backend: EndpointBackend,
    new: str,
    live: str,
    samples: list[dict[str, Any]],
    policy: RolloutConfig,
) -> tuple[DeploymentHealth, DeploymentHealth]:
    """Hold the step until the new deployment served enough requests or time ran out."""
    before = backend.metrics()
    deadline = time.monotonic() + policy.hold_seconds
    requests = itertools.cycle([s["request"] for s in samples]) if samples else None
    while time.monotonic() < deadline:
        served = _delta(backend.metrics().get(new), before.get(new)).requests
        if served >= policy.hold_requests:
            break
        if policy.replay and requests is not None:
            try:
                backend.score(next(requests))
            except EndpointError as exc:
                if exc.status < 500:
                    raise
        else:
            time.sleep(0.5)
    after = backend.metrics()
    return _delta(after.get(new), before.get(new)), _delta(after.get(live), before.get(live))


def _delta(after: MetricsSnapshot | None, before: MetricsSnapshot | None) -> DeploymentHealth:
    if after is None:
        return DeploymentHealth(requests=0, errors=0)
    requests = after.requests - (before.requests if before else 0)
    errors = after.errors - (before.errors if before else 0)
    # p95 of this window's requests only, so one busy window does not colour the next
    p95 = interval_percentile(after, before, 95) if after.latency_buckets else None
    if p95 is None:
        p95 = after.latency_ms.get("p95")
    return DeploymentHealth(requests=requests, errors=errors, p95_ms=p95)


def _roll_back(
    backend: EndpointBackend,
    version: ModelVersion,
    new: str,
    live: str | None,
    reasons: list[str],
    timeline: Timeline,
) -> RolloutRecord:
    if live is not None:
        backend.set_traffic({live: 100, new: 0})
    else:
        backend.set_traffic({new: 0})
    backend.delete(new)
    timeline.add("rollback", {live: 100} if live else {}, "; ".join(reasons))
    return _record(backend, version, "rolled-back", new, live, timeline)


def _record(
    backend: EndpointBackend,
    version: ModelVersion,
    outcome: Literal["promoted", "rolled-back", "unchanged"],
    new: str | None,
    previous: str | None,
    timeline: Timeline,
) -> RolloutRecord:
    status = backend.status()
    return RolloutRecord(
        version=label(version),
        outcome=outcome,
        new_deployment=new,
        previous_deployment=previous,
        events=timeline.events,
        endpoint={
            "url": backend.url,
            "key_file": backend.key_file,
            "deployments": {d.name: d.version for d in status.deployments},
            "traffic": {d.name: d.traffic for d in status.deployments},
        },
    )


def timeline_markdown(record: RolloutRecord) -> str:
    lines = [
        f"### Rollout of {record.version}: {record.outcome}",
        "",
        "| time | action | traffic | compared | note |",
        "|---|---|---|---|---|",
    ]
    for e in record.events:
        compared = ""
        if e.decision is not None:
            d = e.decision
            compared = (
                f"errors {d.candidate.error_rate:.3f} vs {d.live.error_rate:.3f} "
                f"(limit {d.error_rate_limit:.3f}); p95 {d.candidate.p95_ms or 0:.0f} ms vs "
                f"{d.live.p95_ms or 0:.0f} ms (limit {d.p95_limit_ms or 0:.0f}); "
                f"{d.candidate.requests} requests"
            )
        traffic = ", ".join(f"{k} {v}%" for k, v in e.traffic.items())
        lines.append(f"| {e.at} | {e.action} | {traffic} | {compared} | {e.message} |")
    return "\n".join(lines)


@task(name="rollout", cache_policy=NONE)
def rollout_task(
    backends: Backends,
    version: ModelVersion,
    task_type: str,
    samples: list[dict[str, Any]],
    config: RolloutConfig,
) -> RolloutRecord:
    """Blue/green canary rollout of the registered version; rolls back on its own."""
    log.info("rollout: version %s, waiting for the endpoint lock", version.version)
    with backends.endpoint_lock(version.name):  # two runs never pick the same idle colour
        backend = backends.open_endpoint(version.name)
        try:
            record = run_rollout(backend, backends.registry, version, task_type, samples, config)
            if record.outcome != "rolled-back":
                # the task's one documented request (what the docs and the MLflow model's input
                # example show), answered by the model now serving
                request = task_spec(task_type).request_example
                example = {"request": request, "response": backend.score(request).body}
                record = record.model_copy(
                    update={"endpoint": {**record.endpoint, "example": example}}
                )
        finally:
            backend.close()
    create_markdown_artifact(key="rollout", markdown=timeline_markdown(record))
    return record

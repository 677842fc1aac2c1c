"""rollout: blue/green with canary steps on an online endpoint, automatic rollback, repair.

The new version goes to the idle colour at 0% traffic, must answer the evaluation's smoke
samples as the offline evaluation did (within a token-F1 tolerance), then takes the canary steps
of the policy. Each step is judged twice: on the smoke requests the rollout replays to both
deployments by name while the step is held (`tasks.canary_replay`, `decide_rollout_step`), and
on the step's live window, the requests the endpoint's users sent to each side
(`tasks.canary_live`); it advances only when both pass. With `rollout.live.mirror_percent`, a
shadow step comes first: copies of live requests answered by the new deployment at 0%, judged,
never returned. On `rollback` traffic goes back to 100% on the live deployment and the new one
is deleted (aliases untouched); after the last step the `champion` alias moves to the new
version and the old deployment, now at 0%, is deleted. Every action is an event in the
`RolloutRecord` (`tasks.rollout_record`), with the numbers each decision compared.

Each model name has its own endpoint (`Backends.open_endpoint(name)`); a rollout, repair or
manual rollback refuses an endpoint that serves another model's deployments, never deleting or
canarying against them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from pydantic import Field

from platforms.backends import Backends, PlatformKind
from platforms.endpoint import CollectedReader, EndpointBackend, check_own
from platforms.model_version import (
    ModelRegistry,
    ModelVersion,
    alias_notice,
    serving_differs,
)
from serving.api import DeploymentInfo
from serving.client import EndpointError
from tasks.canary_live import LiveCanaryConfig, LiveVerdict, judge_live_window, step_after_live
from tasks.canary_replay import hold_step
from tasks.rollout_policy import RolloutPolicy, Step, decide_rollout_step
from tasks.rollout_record import RolloutRecord, Timeline, timeline_markdown
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
        True,
        description="Replay the smoke requests to both deployments (by name) while a step is "
        "held, and judge the step on them as well as on the live window.",
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
    live: LiveCanaryConfig = Field(
        default_factory=LiveCanaryConfig,
        description="Each canary step judged on the endpoint's live traffic of its window.",
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
    entities: frozenset[str] = frozenset(),
) -> RolloutRecord:
    """Deploy `version` beside the live deployment and shift traffic to it, or roll back.
    `entities`: the placeholders of masked personal data (the screen's) that the live window
    looks for in the answers."""
    timeline = Timeline()
    check_own(backend.status(), version.name, backend.url)
    _notice_champion(backend, registry, version.name, label(version), timeline)
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
        canary = _Canary(
            backend, version, new, live, task_type, samples, policy, entities, timeline
        )
        failed = _shadow_step(canary) or _canary_steps(canary)
        if failed:
            return _roll_back(backend, version, new, live.name, failed, timeline)
        backend.delete(live.name)
        timeline.add("retire", {new: 100}, f"{live.name} ({live.version}) deleted at 0%")
    registry.set_alias(version.name, "champion", version.version)
    timeline.add("promote", {new: 100}, f"champion is now {label(version)}")
    return _record(backend, version, "promoted", new, live and live.name, timeline)


@dataclass(frozen=True)
class _Canary:
    """What the canary steps of one rollout work with: the new deployment beside the live one."""

    backend: EndpointBackend
    version: ModelVersion
    new: str
    live: DeploymentInfo
    task_type: str
    samples: list[dict[str, Any]]
    policy: RolloutConfig
    entities: frozenset[str]
    timeline: Timeline

    def judge_live(self, since: datetime, shadow: bool = False) -> LiveVerdict:
        """The live window since `since` (`shadow`: the mirrored copies, at 0%)."""
        return judge_live_window(
            self.backend.live_records,
            (self.new, label(self.version)),
            (self.live.name, self.live.version),
            since,
            self.policy.live,
            task_spec(self.task_type).response_key,
            self.entities,
            shadow=shadow,
            default_wait=self.backend.live_wait_seconds,
        )


def _shadow_step(canary: _Canary) -> list[str]:
    """With `rollout.live.mirror_percent`, before any user is answered by the new deployment:
    a share of live requests copied to it at 0%, its answers collected and judged against the
    champion's, never returned. Reasons to roll back (empty: go on to the canary steps)."""
    backend, new, live = canary.backend, canary.new, canary.live.name
    mirror, policy = canary.policy.live.mirror_percent, canary.policy.live
    if not mirror or policy.enabled is False:
        return []
    idle = {live: 100, new: 0}
    backend.set_traffic(idle, {new: mirror})
    try:
        verdict = canary.judge_live(datetime.now(UTC), shadow=True)
    finally:
        backend.set_traffic(idle)  # no mirror left behind, whatever happened
    step, reasons = step_after_live(None, verdict, policy)
    canary.timeline.add(f"shadow {mirror}%", idle, "; ".join(reasons), live=verdict)
    return reasons if step is Step.rollback else []


def _canary_steps(canary: _Canary) -> list[str]:
    """Each step of the policy held, judged on the replayed requests (`decide_rollout_step`),
    then on its live window (`tasks.canary_live`). Reasons to roll back (empty: all passed)."""
    backend, new, live, policy = canary.backend, canary.new, canary.live.name, canary.policy
    replayed = [s["request"] for s in canary.samples] if policy.replay else []
    for percent in policy.steps:
        traffic = {new: percent, live: 100 - percent}
        backend.set_traffic(traffic)
        since = datetime.now(UTC)  # the live window of this step starts here
        breaches = 0
        while True:
            candidate, baseline = hold_step(
                backend, new, live, replayed, policy.hold_requests, policy.hold_seconds
            )
            decision = decide_rollout_step(candidate, baseline, policy, breaches)
            if decision.step is not Step.hold_again:
                break
            reasons = "; ".join(decision.reasons)
            canary.timeline.add(f"canary {percent}%", traffic, reasons, decision=decision)
            breaches += 1
        verdict = None
        if decision.step is Step.proceed and policy.live.enabled is not False:
            verdict = canary.judge_live(since)
        step, reasons = step_after_live(decision, verdict, policy.live)
        canary.timeline.add(
            f"canary {percent}%", traffic, "; ".join(reasons), decision=decision, live=verdict
        )
        if step is Step.rollback:
            return reasons
    return []


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


def _notice_champion(
    backend: EndpointBackend,
    registry: ModelRegistry,
    name: str,
    rolling_out: str,
    timeline: Timeline,
) -> None:
    """Say on the timeline when `name@champion` was moved or removed outside tunegate, or is
    not what the endpoint serves (but for `rolling_out`, alone at 100%: a rollout that stopped
    before its alias moved, resumed below): the rollout goes on and moves the alias."""
    live = [d for d in backend.status().deployments if d.traffic == 100]
    serving = live[0].version if live else None
    champion = registry.aliases(name).get("champion")
    differs = None if serving == rolling_out else serving_differs(name, champion, serving)
    for notice in (alias_notice(registry, name), differs):
        if notice:
            timeline.add("notice", {d.name: d.traffic for d in live}, notice)


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


@task(name="rollout", cache_policy=NONE)
def rollout_task(
    backends: Backends,
    version: ModelVersion,
    task_type: str,
    samples: list[dict[str, Any]],
    config: RolloutConfig,
    entities: frozenset[str] = frozenset(),
    collected: CollectedReader | None = None,
) -> RolloutRecord:
    """Blue/green canary rollout of the registered version; rolls back on its own. `collected`:
    where an Azure ML endpoint's traffic is read back for the live windows
    (`tasks.traffic_sources.endpoint_traffic`)."""
    log.info("rollout: version %s, waiting for the endpoint lock", version.version)
    with backends.endpoint_lock(version.name):  # two runs never pick the same idle colour
        backend = backends.open_endpoint(version.name, collected)
        try:
            record = run_rollout(
                backend, backends.registry, version, task_type, samples, config, entities
            )
            if record.outcome != "rolled-back":
                # the task's one documented request (what the docs and the MLflow model's input
                # example show), answered by the model now serving
                request = task_spec(task_type).request_example
                example = {"request": request, "response": backend.score(request).body}
                stays_up = backends.endpoint_stays_up(version.name)
                record = record.model_copy(
                    update={
                        "endpoint": {**record.endpoint, "example": example, "stays_up": stays_up}
                    }
                )
        finally:
            backend.close()
    create_markdown_artifact(key="rollout", markdown=timeline_markdown(record))
    return record

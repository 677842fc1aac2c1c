"""The live half of a canary step: the challenger's and the champion's own users' requests of the
step's window, read from what the endpoint collected, compared, and a verdict.

While a canary step is held, the endpoint routes its users' requests by the step's weights and
collects each one, masked (`serving.collect`: deployment, `name:version` label, status, latency,
request and answers, and how it was routed). The rollout's own requests name their deployment in
the `azureml-model-deployment` header (`routed: named`) and are left out here: the window is
what the endpoint's traffic weights sent to each side (`routed: traffic`), or, in a shadow step,
the copies sent to the challenger at 0% (`routed: mirror`, answers returned to no one).

The endpoint's traffic is read where it is collected: the local endpoint's `collected/` folder,
as it is served; on Azure ML the data collector's output on Blob storage
(`tasks.monitor_azure`, the monitor's reader), which lands minutes after a request, so a step
there waits longer for its window (`wait_seconds` unset: the backend's `live_wait_seconds`, 600 s
on Azure ML, 120 s locally). The scoring script collects a request that named its deployment as
named there too (`serving.scoring.routed_by`); Azure ML does not say which requests are mirrored
copies, so a deployment that takes mirror traffic and no traffic of its own has its users'
requests read as mirrored (`AzureMLEndpointBackend.live_records`). Azure ML's collector keeps no
latency: the live window compares errors, scores and personal data there, the replayed requests
latency.

`decide_live_window` (pure) compares the two sides with the thresholds of `rollout.live`: 5xx
error rate and p95 latency (the same rules as the replayed step, `tasks.rollout_policy`), the
answer scores (lower, and different by a two-sample Kolmogorov-Smirnov test), and the share of
answers carrying personal data (a placeholder such as `<EMAIL_ADDRESS>` that the collector's
masker, the screen's recognizers, put in the answer). Too few challenger requests: it cannot
judge. `judge_live_window` polls the collected records until the
window can be judged or `wait_seconds` ran out; `step_after_live` turns the replayed step's
decision and the live verdict into what the rollout does, `on_cannot_judge` deciding a window
it could not judge: never an advance that nobody sees.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from serving.collect import answer_scores, answer_text, summarise
from tasks.drift_features import has_personal_data
from tasks.monitor import parse_time
from tasks.rollout_policy import (
    DeploymentHealth,
    Step,
    StepDecision,
    error_rate_check,
    p95_check,
)

POLL_SECONDS = 1.0  # how often a waiting window reads the collected records again


class LiveCanaryConfig(BaseModel):
    """How each canary step is judged on the endpoint's live traffic."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    enabled: bool | None = Field(
        None,
        description="Judge each canary step on the requests the endpoint's users sent in its "
        "window too; a step advances only when the replayed requests and the live window pass. "
        "null: where the rollout can read the endpoint's traffic (the local endpoint's "
        "collected records; on Azure ML the data collector's output, monitor.azureml), not "
        "where it cannot (an endpoint collecting nothing), said so in each step's record; true: "
        "required everywhere (no traffic to read: on_cannot_judge); false: off.",
    )
    min_requests: int = Field(
        20, ge=1, description="Live requests the challenger must serve in a step's window."
    )
    wait_seconds: float | None = Field(
        None,
        ge=0,
        le=86_400,
        description="Longest a step waits, after its hold, for min_requests live requests; "
        "then the window cannot be judged (on_cannot_judge). null: 120 on the local endpoint "
        "(its records are written as it serves), 600 on Azure ML (its data collector lands "
        "requests in blob storage minutes later; raise it where yours lags more).",
    )
    on_cannot_judge: Literal["rollback", "smoke-only"] = Field(
        "rollback",
        description="A window with too little live traffic (or an endpoint whose traffic the "
        "rollout cannot read): rollback, or smoke-only (advance on the replayed requests alone, "
        "said so in the step's record; for an endpoint without users, such as the demo's).",
    )
    max_error_rate_increase: float = Field(
        0.01, ge=0, le=1, description="5xx rate the challenger may add over the champion's."
    )
    max_p95_ratio: float = Field(
        1.5,
        ge=1,
        description="Challenger live p95 latency at most this multiple of the champion's.",
    )
    p95_allowance_ms: float = Field(
        50.0, ge=0, description="Absolute p95 slack (ms) on top of the ratio."
    )
    score_p_value: float = Field(
        0.01,
        ge=0,
        le=1,
        description="The challenger's answer scores fail when their median is below the "
        "champion's and a two-sample Kolmogorov-Smirnov test finds them different at a p-value "
        "below this (0: never; answers without a score: not compared).",
    )
    max_personal_increase: float = Field(
        0.05,
        ge=0,
        le=1,
        description="Share of answers carrying personal data the challenger may add over the "
        "champion's.",
    )
    mirror_percent: int = Field(
        0,
        ge=0,
        le=50,
        description="Before the first canary step, copy this share of live requests to the "
        "challenger at 0% (a shadow step, as Azure ML's mirror traffic): its answers are "
        "collected and judged, never returned. 0: no shadow step.",
    )


class LiveSide(BaseModel):
    """What one side served in the window, from its collected records."""

    model_config = ConfigDict(frozen=True)
    deployment: str
    version: str | None
    health: DeploymentHealth  # requests, 5xx errors, p95 of the answered ones
    answers: int = Field(ge=0, description="Answers read (one per record of a request).")
    median_score: float | None = None
    scores: list[float] = Field(default_factory=list, exclude=True)  # compared, not recorded
    personal_answers: int = Field(0, ge=0, description="Answers carrying personal data.")

    @property
    def personal_rate(self) -> float:
        return self.personal_answers / self.answers if self.answers else 0.0


class LiveVerdict(BaseModel):
    """The live window of one step: both sides' numbers, the limits and the verdict."""

    model_config = ConfigDict(frozen=True)
    verdict: Literal["pass", "fail", "cannot-judge", "not-judged"]
    reasons: list[str]
    since: str
    until: str
    challenger: LiveSide | None = None
    champion: LiveSide | None = None
    error_rate_limit: float | None = None
    p95_limit_ms: float | None = None
    score_p_value: float | None = None  # the KS test's, when both sides had scores
    personal_rate_limit: float | None = None


def decide_live_window(
    challenger: LiveSide,
    champion: LiveSide,
    config: LiveCanaryConfig,
    since: str,
    until: str,
) -> LiveVerdict:
    """Pass when the challenger served `min_requests` live requests with no more 5xx errors,
    no slower, no lower answer scores and no more personal data in its answers than the champion
    on the same window (each within its allowance); cannot-judge with fewer requests."""
    c, b = challenger.health, champion.health
    if c.requests < config.min_requests:
        return LiveVerdict(
            verdict="cannot-judge",
            reasons=[
                f"live: the challenger served {c.requests} live requests in the window, fewer "
                f"than rollout.live.min_requests ({config.min_requests})"
            ],
            since=since,
            until=until,
            challenger=challenger,
            champion=champion,
        )
    error_limit, reasons = error_rate_check(c, b, config.max_error_rate_increase)
    p95_limit, slow = p95_check(c, b, config.max_p95_ratio, config.p95_allowance_ms)
    reasons += slow
    p_value = None
    if challenger.scores and champion.scores:
        from scipy.stats import ks_2samp  # imported here: ~0.3 s that a CLI start need not pay

        p_value = float(ks_2samp(challenger.scores, champion.scores).pvalue)
        lower = (challenger.median_score or 0) < (champion.median_score or 0)
        if lower and p_value < config.score_p_value:
            reasons.append(
                f"challenger answer scores lower (median {challenger.median_score:.3f} vs "
                f"champion {champion.median_score:.3f}; KS p-value {p_value:.4f} below "
                f"{config.score_p_value})"
            )
    personal_limit = champion.personal_rate + config.max_personal_increase
    if challenger.personal_rate > personal_limit:
        reasons.append(
            f"challenger answers carrying personal data {challenger.personal_rate:.3f} above "
            f"{personal_limit:.3f} (champion {champion.personal_rate:.3f} + "
            f"{config.max_personal_increase})"
        )
    return LiveVerdict(
        verdict="fail" if reasons else "pass",
        reasons=[
            "live: " + r.replace("candidate", "challenger").replace("(live ", "(champion ")
            for r in reasons
        ],
        since=since,
        until=until,
        challenger=challenger,
        champion=champion,
        error_rate_limit=error_limit,
        p95_limit_ms=p95_limit,
        score_p_value=p_value,
        personal_rate_limit=personal_limit,
    )


def live_side(
    records: Iterable[dict[str, Any]],
    deployment: str,
    version: str | None,
    response_key: str,
    entities: frozenset[str],
) -> LiveSide:
    """One side's numbers from its collected records of the window (already selected)."""
    kept = list(records)
    summary = next(iter(summarise(iter(kept), examples=0)), None)
    health = DeploymentHealth(
        requests=summary.requests if summary else 0,
        errors=summary.errors if summary else 0,
        p95_ms=summary.latency_ms.get("p95") if summary else None,
    )
    scores: list[float] = []
    answers = personal = 0
    for record in kept:
        outputs = record.get("outputs")
        if not isinstance(outputs, list):
            continue
        scores += answer_scores(outputs)
        for output in outputs:
            answers += 1
            personal += has_personal_data(answer_text(output, response_key) or "", entities)
    return LiveSide(
        deployment=deployment,
        version=version,
        health=health,
        answers=answers,
        median_score=round(statistics.median(scores), 4) if scores else None,
        scores=scores,
        personal_answers=personal,
    )


def window_records(
    records: Iterator[dict[str, Any]],
    since: datetime,
    until: datetime,
    sides: dict[tuple[str, str | None, str], list[dict[str, Any]]],
) -> None:
    """Add each collected record of [since, until) to its side's list in `sides`, keyed by
    (deployment, version label, how it was routed); records of other keys are skipped. A record
    stamped to the second (Azure ML's data collector) counts from `since`'s whole second: it
    cannot say whether it came before `since` within that second."""
    whole_second = since.replace(microsecond=0)
    for record in records:
        key = (record.get("deployment"), record.get("version"), record.get("routed", "traffic"))
        if key not in sides:
            continue
        stamp = str(record.get("time"))
        try:
            at = parse_time(stamp)
        except ValueError:
            continue
        start = since if "." in stamp else whole_second
        if start <= at < until:
            sides[key].append(record)


def judge_live_window(
    read: Callable[[datetime], Iterator[dict[str, Any]] | None],
    challenger: tuple[str, str],
    champion: tuple[str, str | None],
    since: datetime,
    config: LiveCanaryConfig,
    response_key: str,
    entities: frozenset[str],
    shadow: bool = False,
    default_wait: float = 120.0,
) -> LiveVerdict:
    """The verdict on the window from `since` to now, read again every POLL_SECONDS until it
    can be judged or `config.wait_seconds` (unset: `default_wait`, the backend's) ran out.
    `read(since)`: the endpoint's collected records from `since` on at least
    (`EndpointBackend.live_records`), None when it keeps none the rollout can read. `shadow`:
    the challenger's side is the mirrored copies, not traffic routed to it."""
    wait = default_wait if config.wait_seconds is None else config.wait_seconds
    deadline = time.monotonic() + wait
    routed = "mirror" if shadow else "traffic"
    while True:
        until = datetime.now(UTC)
        stamps = since.isoformat(timespec="seconds"), until.isoformat(timespec="seconds")
        records = read(since.replace(microsecond=0))  # records stamped to the second included
        if records is None:  # nothing to read: required (enabled: true) or not judged
            unread = "live: this endpoint keeps no traffic records a rollout can read"
            if config.enabled:
                return LiveVerdict(
                    verdict="cannot-judge", reasons=[unread], since=stamps[0], until=stamps[1]
                )
            note = f"{unread}: not judged (rollout.live.enabled: null)"
            return LiveVerdict(
                verdict="not-judged", reasons=[note], since=stamps[0], until=stamps[1]
            )
        mine, theirs = (*challenger, routed), (*champion, "traffic")
        sides: dict[tuple[str, str | None, str], list[dict[str, Any]]] = {mine: [], theirs: []}
        window_records(records, since, until, sides)
        verdict = decide_live_window(
            live_side(sides[mine], *challenger, response_key, entities),
            live_side(sides[theirs], *champion, response_key, entities),
            config,
            *stamps,
        )
        if verdict.verdict != "cannot-judge" or time.monotonic() >= deadline:
            return verdict
        time.sleep(POLL_SECONDS)


def step_after_live(
    decision: StepDecision | None, live: LiveVerdict | None, config: LiveCanaryConfig
) -> tuple[Step, list[str]]:
    """What the rollout does after a step: the replayed step's decision (None: the step had no
    replayed half, as the shadow step), then the live window's (None: not judged,
    `rollout.live.enabled` false); and the reasons, for the record."""
    reasons = list(decision.reasons) if decision else []
    if decision is not None and decision.step is not Step.proceed:
        return decision.step, reasons
    if live is None:
        return Step.proceed, [*reasons, "live window not judged (rollout.live.enabled: false)"]
    reasons += live.reasons
    if live.verdict == "not-judged":
        return Step.proceed, reasons
    if live.verdict == "pass":
        return Step.proceed, [*reasons, _passed(live)]
    if live.verdict == "fail":
        return Step.rollback, reasons
    if config.on_cannot_judge == "smoke-only":
        note = "cannot judge the live window: advanced on the replayed requests alone"
        return Step.proceed, [*reasons, f"{note} (rollout.live.on_cannot_judge: smoke-only)"]
    note = "cannot judge the live window: rolled back (rollout.live.on_cannot_judge: rollback)"
    return Step.rollback, [*reasons, note]


def _passed(live: LiveVerdict) -> str:
    c, b = live.challenger, live.champion
    assert c is not None and b is not None
    return (
        f"live: passed on {c.health.requests} challenger and {b.health.requests} champion requests"
    )


def live_markdown(live: LiveVerdict | None) -> str:
    """One table cell: both sides' live numbers and the verdict."""
    if live is None:
        return ""
    c, b = live.challenger, live.champion
    if c is None or b is None:
        return live.verdict
    score = (
        f"; median score {c.median_score:.3f} vs {b.median_score:.3f} (KS p "
        f"{live.score_p_value:.3f})"
        if c.median_score is not None
        and b.median_score is not None
        and live.score_p_value is not None
        else ""
    )
    return (
        f"{live.verdict}: {c.health.requests} vs {b.health.requests} requests; 5xx "
        f"{c.health.error_rate:.3f} vs {b.health.error_rate:.3f}; p95 "
        f"{c.health.p95_ms or 0:.0f} vs {b.health.p95_ms or 0:.0f} ms{score}; personal data "
        f"{c.personal_rate:.3f} vs {b.personal_rate:.3f}"
    )

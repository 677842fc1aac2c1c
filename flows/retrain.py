"""The `retrain` flow: ingest → screen → approve → split → train → evaluate → register → rollout.

The flow only wires tasks together: the config's `backends()` are built once and handed to every
task, each task is called directly inside `with summary.stage(name)` (flows/summary.py times it
and keeps how it ended); the lineage is built by tasks/register.py (`lineage_of`) from the typed
results in hand, and what earlier runs already did with the data is asked of tasks/reuse.py. Every
stage's work lives in `tasks/`. A rejection (or an approval timeout) ends the run in a Failed state before anything is
split; a failed gate ends it before registration, with every unmet criterion in the message, and
so does a gate that cannot judge (status `cannot-judge`: too few test records, or a bootstrap
interval wider than the regression it must detect). Too few test records is known at the split:
the run counts the test split the screened data will make before it asks a reviewer, and again
after the split, before training (tasks/judgeable.py), and stops there with the gate's message.
Every run has a log file, `{store}/runs/<flow run id>/run.log` (flows/run_log.py): warnings and libraries' lines go there,
its own lines stay on the terminal. Every run is an MLflow run
(flows/run_tracking.py): each stage's results are logged as they come, and the run ends with the
flow's outcome.

Two flows, both named `retrain`, run that one pipeline (`run_pipeline`): `retrain` takes the whole
`PipelineConfig` (`tunegate run`, tests); `retrain_request` takes the small `RetrainRequest` a
deployment's form holds (flows/deployments.py), builds the config from its config file and
overrides, and ends Completed with "nothing new since ..." when its inputs hold no file, or only
data an earlier run already had approved and trained on: a quiet night is not a failure.

Runs are named for their model and data, `<model name> · <inputs id>` (`run_name`: the inputs id
is the first 8 hex digits of a hash of the inputs as given, the one thing known of the data when
the run starts), and tagged with the model name and the task; a name given in the deployment's
form is kept (only a generated `adjective-animal` name is replaced).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from prefect import flow
from prefect.context import FlowRunContext
from prefect.exceptions import PrefectException
from prefect.states import State

from flows.config import ConfigError, PipelineConfig, RetrainRequest
from flows.run_log import own_process, route_to_file, run_log
from flows.run_tracking import RunTracker
from flows.summary import STOPS, RunSummary, run_logger
from platforms.backends import Backends
from platforms.endpoint import CollectedReader
from platforms.evaluation import GateDecision
from platforms.hashing import sha256_text, stable_json
from platforms.notify import emit_decision
from tasks.approve import approve_task
from tasks.evaluate import evaluate_task
from tasks.ingest import ingest_task, last_ingest_time, quarantine_reasons, retire_raw
from tasks.ingest_inputs import expand_inputs
from tasks.judgeable import require_judgeable
from tasks.records import require_records, require_trainable
from tasks.register import lineage_of, register_task
from tasks.reuse import reread_needed, trained_before
from tasks.rights import rights_task
from tasks.rollout import RolloutRecord, rollout_task
from tasks.screen import screen_task
from tasks.split import count_split_task, split_task
from tasks.traffic_sources import endpoint_traffic
from tasks.train import train_task
from trainer.cache import user_cache

DESCRIPTION = (
    "Ingest, screen, approve and split training data; fine-tune, evaluate against the base "
    "model and the champion, and register the model that passes the gate."
)


_GENERATED_NAME = re.compile(r"[a-z]+-[a-z]+")  # Prefect's (and its UI's) two-word slugs


def run_name(config: PipelineConfig) -> str:
    """`<model name> · <inputs id>`, e.g. `helpdesk-qa · 891109e2`."""
    inputs_id = sha256_text(stable_json(sorted(config.ingest.inputs)))[:8]
    return f"{config.registry.name_for(config.task.value)} · {inputs_id}"


def _kept_or(name: str) -> str:
    """The run's current name when a person gave it (a deployment run created with a name),
    else `name`: Prefect renames every run after its flow's `flow_run_name`."""
    from prefect.runtime import flow_run

    current = flow_run.name or ""
    return name if not current or _GENERATED_NAME.fullmatch(current) else current


def _config_run_name() -> str:
    from prefect.runtime import flow_run

    config = flow_run.parameters.get("config")
    try:
        if not isinstance(config, PipelineConfig):
            config = PipelineConfig.model_validate(config or {})
        return _kept_or(run_name(config))
    except ValueError:  # the flow itself says what is wrong with it
        return _kept_or("retrain")


@flow(
    name="retrain",
    flow_run_name=_config_run_name,
    description=DESCRIPTION,
    log_prints=True,
)
def retrain(config: PipelineConfig, reason: str = "tunegate run") -> State:
    """Run the pipeline up to `config.until`; the returned state carries the RunSummary.

    Args:
        config: Every stage's settings: the data to read, the screening policy, the approval
            mode, the split, training, the gate, the registry and the rollout.
        reason: Why the run starts (kept in its lineage): `tunegate run`, an erasure.
    """
    return run_pipeline(config, reason=reason)


def _request_run_name() -> str:
    """`run_name` of the request's config (`retrain` when it cannot be read), unless the run was
    given a name."""
    from prefect.runtime import flow_run

    request = flow_run.parameters.get("request")
    try:
        if not isinstance(request, RetrainRequest):
            request = RetrainRequest.model_validate(request or {})
        return _kept_or(run_name(request.config()))
    except (ConfigError, ValueError):
        return _kept_or("retrain")


@flow(
    name="retrain",
    flow_run_name=_request_run_name,
    description=DESCRIPTION,
    log_prints=True,
)
def retrain_request(request: RetrainRequest = RetrainRequest()) -> State:  # noqa: B008
    """The run a deployment's form asks for: its config file with its overrides, run through the
    same pipeline as `tunegate run`; nothing new to read ends the run Completed. (`request`
    has no Args entry on purpose: the UI form would spend a line on it.)
    """
    try:
        config = request.config()
    except ConfigError as exc:  # the one line naming the field, as `tunegate run --set` prints
        flow_run_id = _flow_run_id()
        if own_process(flow_run_id):  # no store to keep a log in: the local cache's runs/
            route_to_file(user_cache() / "runs" / str(flow_run_id) / "run.log")
        run_logger().error("%s", exc)
        return RunSummary(flow_run_id=flow_run_id).failed("invalid-config", str(exc))
    return run_pipeline(config, only_new=True, reason=started_because(request))


def _flow_run_id() -> str | None:
    context = FlowRunContext.get()
    return str(context.flow_run.id) if context else None


def started_because(request: RetrainRequest) -> str:
    """Why a deployment's run started: the trigger's reason (drift, new data), else the schedule,
    else a person (the Prefect UI, or a client of the API)."""
    if request.reason.strip():
        return request.reason.strip()
    context = FlowRunContext.get()
    flow_run = context.flow_run if context else None
    if flow_run is not None and flow_run.auto_scheduled:
        return "schedule"
    created_by = getattr(flow_run, "created_by", None) if flow_run else None
    who = getattr(created_by, "display_value", None) or getattr(created_by, "type", None)
    return f"a person ({who})" if who else "a person (the Prefect UI or API)"


def run_pipeline(
    config: PipelineConfig, only_new: bool = False, reason: str | None = None
) -> State:
    """The pipeline every `retrain` flow runs, up to `config.until`; the state carries the
    RunSummary. With `only_new` (a deployment's run) inputs that hold no file, or only data an
    earlier run already had approved and trained on, end it Completed: "nothing new since ..."."""
    context = FlowRunContext.get()
    summary = RunSummary(flow_run_id=_flow_run_id(), reason=reason)
    _tag_run(config)
    backends = config.backends()
    log_file = backends.state_dir("runs", "runs") / (summary.flow_run_id or _now()) / "run.log"
    # warnings and libraries' lines into the run's log file, the run's own on the terminal
    with run_log(log_file, keep=own_process(summary.flow_run_id)):
        run_logger().info(
            "run log: %s (warnings, libraries' lines, the trainer's output)", log_file
        )
        with RunTracker(config, backends, summary) as tracker:  # ends the MLflow run with the flow
            run_name = context.flow_run.name if context else None
            return _stages(config, summary, backends, tracker, run_name, only_new)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def _tag_run(config: PipelineConfig) -> None:
    """Tag this flow run with its model name and task (its other tags kept)."""
    from prefect import get_client

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return
    model, task = config.registry.name_for(config.task.value), config.task.value
    tags = sorted({*context.flow_run.tags, model, task})
    with get_client(sync_client=True) as client:
        client.update_flow_run(context.flow_run.id, tags=tags)


def _stages(
    config: PipelineConfig,
    summary: RunSummary,
    backends: Backends,
    tracker: RunTracker,
    run_name: str | None,
    only_new: bool,
) -> State:
    try:
        tracker.open(run_name)  # the MLflow run: parameters now, each stage's results below
        if only_new and not expand_inputs(
            config.ingest.inputs, config.azure, config.task, allow_empty=True
        ):
            since = last_ingest_time(backends.store) or "this store was created (no data yet)"
            where = ", ".join(config.ingest.inputs)
            return summary.nothing_new(f"nothing new since {since}: {where} hold no file")
        with summary.stage("ingest"):  # the inputs' rights first: a refused licence reads nothing
            ingest, policy = config.ingest, config.approval.licences
            rights = rights_task(
                config.task, ingest.inputs, ingest.datasheets, config.azure, policy
            )
            tracker.rights(rights)
            ingested = ingest_task(
                backends, config.task, config.columns, config.ingest, azure=config.azure
            )
            if reread_needed(backends.store, ingested, config.screen):  # deleted, needed now
                ingested = ingest_task(
                    backends, config.task, config.columns, config.ingest, config.azure, True
                )
        summary.dataset("ingest", ingested)
        tracker.dataset("ingest", ingested)
        name = _model(config)
        if only_new and ingested.reused:
            since = trained_before(
                backends,
                ingested,
                model_name=name,
                task=config.task.value,
                train=config.train,
                split_only=config.until == "split",
            )
            if since:
                return summary.nothing_new(
                    f"nothing new since {since}: the inputs hold only data an earlier run "
                    f"already had approved and trained on ({ingested.content_hash[:12]})"
                )
        require_records(ingested, quarantine_reasons(backends.store, ingested))
        with summary.stage("screen"):
            screened = screen_task(backends, ingested, config.screen, config.azure)
        summary.dataset("screen", screened.dataset, profile=config.screen.profile)
        if screened.report.input_profiles:
            summary.note("screen", input_profiles=screened.report.input_profiles)
        tracker.screened(screened)
        require_records(screened.dataset, screened.report.quarantine_reasons)
        if config.until != "split":  # the gate will judge: can it, on the test split to come?
            coming = count_split_task(backends, screened.dataset, config.split)
            _require_judgeable(config, coming["test"], "nothing was asked of a reviewer")
        with summary.stage("approve"):
            approval = approve_task(
                backends,
                screened,
                config.approval,
                _model(config),
                config.ingest.owners(),
                rights,
            )
        summary.approved(screened.dataset, approval)
        tracker.approved(approval)
        retire_raw(backends.store, ingested, config.ingest, approval)
        with summary.stage("split"):
            split = split_task(backends, screened.dataset, config.split, approval.exclude_ids)
        summary.dataset("split", split, uri=split.uri)
        tracker.dataset("split", split)
        if config.until == "split":
            return summary.completed("data ingested, screened, approved and split")
        require_trainable(split)
        _require_judgeable(config, split.counts["test"], "nothing was trained")

        with summary.stage("train"):
            job = train_task(backends, split, config.train, tracker.run_id)
        summary.trained(job)
        tracker.trained(job)
        with summary.stage("evaluate"):
            evaluation = evaluate_task(
                backends, split, job, name, config.evaluate, config.screen, config.served_with
            )
        summary.evaluated(evaluation)
        tracker.evaluated(evaluation)
        if not evaluation.gate.passed:
            return _gate_failed(config, summary, evaluation.gate)
        datasets = {"ingest": ingested, "screen": screened.dataset, "split": split}
        with summary.stage("register"):
            version = register_task(
                backends,
                name,
                job.output_dir,
                evaluation.candidate,
                lineage_of(
                    datasets,
                    approval,
                    job,
                    evaluation,
                    flow_run_id=summary.flow_run_id,
                    tracking_run_id=tracker.run_id,
                    config_hash=config.content_hash,
                    training_backend=config.train.backend,
                    reason=summary.reason,
                    rights=rights,
                ),
                config.promotes_at_registration,
                evaluation.serving,
                screened.report,
                split.counts,
            )
        summary.registered(version)
        tracker.registered(version)
        if config.promotes_at_registration and not summary.stages["register"].details["reused"]:
            emit_decision("promoted", name, {"version": version.version, "endpoint": None})
        if config.until == "register":
            return summary.completed(f"registered {summary.model_version}")

        with summary.stage("rollout"):
            rollout = rollout_task(
                backends,
                version,
                config.task.value,
                evaluation.samples,
                config.rollout,
                frozenset(config.screen.all_entities()),
                _live_traffic(config, backends, version.name),
            )
    except PrefectException:
        raise  # pauses, cancellations and crashes are Prefect's to handle
    except Exception as exc:  # noqa: BLE001 (any stage failure: the run ends with its summary)
        return summary.failed_with(exc)  # so `tunegate run --summary` writes one for it too
    except STOPS as stop:  # a signal between stages (one inside a stage is seen there)
        summary.stopped(stop)
        raise
    tracker.rolled_out(rollout.outcome)
    return _rolled_out(config, summary, rollout)


def _live_traffic(config: PipelineConfig, backends: Backends, model: str) -> CollectedReader | None:
    """Where the rollout reads the endpoint's traffic back for its live windows: on Azure ML,
    the data collector's output where the monitor reads it (monitor.azureml); None when the
    live window is off or the endpoint reads its own (local)."""
    if config.rollout.live.enabled is False:
        return None
    return endpoint_traffic(backends, model, config.monitor.azureml, config.azure)


def _require_judgeable(config: PipelineConfig, test_records: int, when: str) -> None:
    """Stop the run (CannotJudge, status `cannot-judge`) when the gate could not judge on the
    test split: `when` says what was spared."""
    evaluate = config.evaluate
    require_judgeable(test_records, evaluate, when, evaluate.max_test_records)


def _model(config: PipelineConfig) -> str:
    """The registered model's name, which the run's events concern."""
    return config.registry.name_for(config.task.value)


def _gate_failed(config: PipelineConfig, summary: RunSummary, gate: GateDecision) -> State:
    """The run ends before registration: the candidate failed the gate, or the gate cannot judge
    it (too few test records, or an interval too wide): nothing is registered or promoted."""
    if gate.verdict == "cannot-judge":
        status, what = "cannot-judge", "the gate cannot judge the candidate"
    else:
        status, what = "gate-failed", "the candidate failed the gate"
    message = f"{what}, nothing was registered: " + "; ".join(gate.reasons)
    evaluation = summary.evaluation or {}
    emit_decision(
        "gate-failed",
        _model(config),
        {
            "verdict": gate.verdict,
            "reasons": gate.reasons,
            "candidate": evaluation.get("candidate"),
            "champion": evaluation.get("champion"),
            "champion_version": evaluation.get("champion_version"),
        },
    )
    return summary.failed(status, message)


def _rolled_out(config: PipelineConfig, summary: RunSummary, rollout: RolloutRecord) -> State:
    summary.endpoint = rollout.endpoint
    summary.note(
        "rollout",
        outcome=rollout.outcome,
        deployment=rollout.new_deployment,
        **({"live": rollout.live_windows()} if rollout.live_windows() else {}),
    )
    version = int(rollout.version.rpartition(":")[2])  # the record's label is name:version
    if rollout.outcome == "rolled-back":
        message = f"rolled back {rollout.version}: {rollout.events[-1].message}"
        step = rollout.events[-1].action
        emit_decision("rolled-back", _model(config), {"version": version, "step": step})
        return summary.failed("rolled-back", message)
    url = rollout.endpoint["url"]
    if rollout.outcome == "promoted":
        emit_decision("promoted", _model(config), {"version": version, "endpoint": url})
    stays_up = rollout.endpoint.get("stays_up")
    serving = f"registered {summary.model_version}, serving at {url}"
    return summary.completed(f"{serving}; {stays_up}" if stays_up else serving)

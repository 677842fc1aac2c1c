"""The `retrain` flow: ingest → screen → approve → split → train → evaluate → register → rollout.

The flow only wires tasks together: the config's `backends()` are built once and handed to every
task, each task is called directly inside `with summary.stage(name)` (flows/summary.py times it
and keeps how it ended); the lineage is built from the typed results in hand. Every stage's work lives in
`tasks/`. A rejection (or an approval timeout) ends the run in a Failed state before anything is
split; a failed gate ends it before registration, with every unmet criterion in the message, and
so does a gate that cannot judge (status `cannot-judge`: too few test records, or a bootstrap
interval wider than the regression it must detect). Every run is an MLflow run
(flows/run_tracking.py): each stage's results are logged as they come, and the run ends with the
flow's outcome.
"""

from __future__ import annotations

from prefect import flow
from prefect.context import FlowRunContext
from prefect.exceptions import PrefectException
from prefect.states import State

from flows.config import PipelineConfig
from flows.run_tracking import RunTracker
from flows.summary import STOPS, RunSummary, lineage
from platforms.backends import Backends
from tasks.approve import approve_task
from tasks.evaluate import evaluate_task
from tasks.gate import GateDecision
from tasks.ingest import ingest_task, quarantine_reasons
from tasks.notify import notify_task
from tasks.records import require_records, require_trainable
from tasks.register import register_task
from tasks.rollout import RolloutRecord, rollout_task
from tasks.screen import screen_task
from tasks.split import split_task
from tasks.train import train_task


@flow(
    name="retrain",
    flow_run_name="retrain-{config.task.value}",
    description="Ingest, screen, approve and split training data; fine-tune, evaluate against "
    "the base model and the champion, and register the model that passes the gate.",
    log_prints=True,
)
def retrain(config: PipelineConfig) -> State:
    """Run the pipeline up to `config.until`; the returned state carries the RunSummary.

    Args:
        config: Every stage's settings: the data to read, the screening policy, the approval
            mode, the split, training, the gate, the registry and the rollout.
    """
    context = FlowRunContext.get()
    summary = RunSummary(flow_run_id=str(context.flow_run.id) if context else None)
    backends = config.backends()
    with RunTracker(config, backends, summary) as tracker:  # ends the MLflow run as the flow ends
        return _stages(
            config, summary, backends, tracker, context.flow_run.name if context else None
        )


def _stages(
    config: PipelineConfig,
    summary: RunSummary,
    backends: Backends,
    tracker: RunTracker,
    run_name: str | None,
) -> State:
    try:
        tracker.open(run_name)  # the MLflow run: parameters now, each stage's results below
        with summary.stage("ingest"):
            ingested = ingest_task(
                backends, config.task, config.columns, config.ingest, azure=config.azure
            )
        summary.dataset("ingest", ingested)
        tracker.dataset("ingest", ingested)
        require_records(ingested, quarantine_reasons(backends.store, ingested))
        with summary.stage("screen"):
            screened = screen_task(backends, ingested, config.screen)
        summary.dataset("screen", screened.dataset)
        tracker.screened(screened)
        require_records(screened.dataset, screened.report.quarantine_reasons)
        with summary.stage("approve"):
            approval = approve_task(backends, screened, config.approval, config.notify)
        summary.approved(screened.dataset, approval)
        tracker.approved(approval)
        with summary.stage("split"):
            split = split_task(backends, screened.dataset, config.split, approval.exclude_ids)
        summary.dataset("split", split, uri=split.uri)
        tracker.dataset("split", split)
        if config.until == "split":
            return summary.completed("data ingested, screened, approved and split")
        require_trainable(split)

        with summary.stage("train"):
            job = train_task(backends, split, config.train, tracker.run_id)
        summary.trained(job)
        tracker.trained(job)
        name = config.registry.name_for(config.task.value)
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
                lineage(
                    config, summary.flow_run_id, datasets, approval, job, evaluation, tracker.run_id
                ),
                config.promotes_at_registration,
                evaluation.serving,
            )
        summary.registered(version)
        tracker.registered(version)
        if config.until == "register":
            return summary.completed(f"registered {summary.model_version}")

        with summary.stage("rollout"):
            rollout = rollout_task(
                backends, version, config.task.value, evaluation.samples, config.rollout
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


def _gate_failed(config: PipelineConfig, summary: RunSummary, gate: GateDecision) -> State:
    """The run ends before registration: the candidate failed the gate, or the gate cannot judge
    it (too few test records, or an interval too wide): nothing is registered or promoted."""
    if gate.verdict == "cannot-judge":
        status, what = "cannot-judge", "the gate cannot judge the candidate"
    else:
        status, what = "gate-failed", "the candidate failed the gate"
    message = f"{what}, nothing was registered: " + "; ".join(gate.reasons)
    notify_task(config.notify, "gate-failed", message, summary.evaluation or {})
    return summary.failed(status, message)


def _rolled_out(config: PipelineConfig, summary: RunSummary, rollout: RolloutRecord) -> State:
    summary.endpoint = rollout.endpoint
    summary.note("rollout", outcome=rollout.outcome, deployment=rollout.new_deployment)
    if rollout.outcome == "rolled-back":
        message = f"rolled back {rollout.version}: {rollout.events[-1].message}"
        notify_task(config.notify, "rolled-back", message, {"endpoint": rollout.endpoint})
        return summary.failed("rolled-back", message)
    url = rollout.endpoint["url"]
    return summary.completed(f"registered {summary.model_version}, serving at {url}")

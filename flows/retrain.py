"""The `retrain` flow: ingest → screen → approve → split → train → evaluate → register → rollout.

The flow only wires tasks together: the config's `backends()` are built once and handed to every
task, each task is called with keyword arguments, and `RunSummary` (flows/summary.py) times the
stages; the lineage is built from the typed results in hand. Every stage's work lives in
`tasks/`. A rejection (or an approval timeout) ends the run in a Failed state before anything is
split; a failed gate ends it before registration, with every unmet criterion in the message.
"""

from __future__ import annotations

from prefect import flow
from prefect.context import FlowRunContext
from prefect.exceptions import PrefectException
from prefect.states import Completed, Failed, State

from flows.config import PipelineConfig
from flows.summary import RunSummary, evaluation_summary, lineage
from platforms.store import DatasetRef
from tasks.approve import DataRejected, approve_task
from tasks.evaluate import evaluate_task
from tasks.ingest import ingest_task
from tasks.notify import notify_task
from tasks.records import NoUsableRecords
from tasks.register import register_task
from tasks.rollout import rollout_task
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
    try:
        ingested = summary.run(
            "ingest",
            ingest_task,
            backends=backends,
            task_type=config.task,
            columns=config.columns,
            config=config.ingest,
            azure=config.azure,
        )
        summary.dataset("ingest", ingested)
        _require_records(ingested, "accepted")
        screened = summary.run(
            "screen", screen_task, backends=backends, ingested=ingested, config=config.screen
        )
        summary.dataset("screen", screened.dataset)
        _require_records(screened.dataset, "accepted")
        approval = summary.run(
            "approve",
            approve_task,
            backends=backends,
            screened=screened,
            config=config.approval,
            notify=config.notify,
        )
        summary.note(
            "approve",
            content_hash=screened.dataset.content_hash,
            decision=approval.decision,
            reviewer=approval.reviewer,
            mode=approval.mode.value,
            reused=approval.reused,
        )
        split = summary.run(
            "split",
            split_task,
            backends=backends,
            screened=screened.dataset,
            config=config.split,
            exclude_ids=approval.exclude_ids,
        )
        summary.dataset("split", split, uri=split.uri)
        if config.until == "split":
            summary.end("completed")
            return Completed(message="data ingested, screened, approved and split", data=summary)

        job = summary.run("train", train_task, backends=backends, split=split, config=config.train)
        summary.note(
            "train", job=job.name, status=job.status, output_dir=job.output_dir, reused=job.reused
        )
        name = config.registry.name_for(config.task.value)
        evaluation = summary.run(
            "evaluate",
            evaluate_task,
            backends=backends,
            split=split,
            job=job,
            model_name=name,
            config=config.evaluate,
            screen=config.screen,
            serving=config.served_with,
        )
        summary.evaluation = evaluation_summary(evaluation)
        summary.note(
            "evaluate",
            test_records=evaluation.test_records,
            primary_metric=evaluation.primary_metric,
        )
        if not evaluation.gate.passed:
            message = "the candidate failed the gate, nothing was registered: " + "; ".join(
                evaluation.gate.reasons
            )
            summary.stages["evaluate"].status = "gate-failed"
            summary.end("gate-failed", message)
            notify_task(config.notify, "gate-failed", message, summary.evaluation)
            return Failed(message=message, data=summary)

        datasets = {"ingest": ingested, "screen": screened.dataset, "split": split}
        version = summary.run(
            "register",
            register_task,
            backends=backends,
            name=name,
            model_dir=job.output_dir,
            metrics=evaluation.candidate,
            lineage=lineage(config, summary.flow_run_id, datasets, approval, job, evaluation),
            promote=config.promotes_at_registration,
            serving=evaluation.serving,
        )
        summary.model_version = f"{version.name}:{version.version}"
        summary.note(
            "register",
            name=version.name,
            version=version.version,
            reused=version.lineage.get("flow_run_id") != summary.flow_run_id,
        )
        if config.until == "register":
            summary.end("completed")
            return Completed(message=f"registered {summary.model_version}", data=summary)

        rollout = summary.run(
            "rollout",
            rollout_task,
            backends=backends,
            version=version,
            task_type=config.task.value,
            samples=evaluation.samples,
            config=config.rollout,
        )
    except DataRejected as exc:
        summary.end("rejected", str(exc))
        return Failed(message=str(exc), data=summary)
    except NoUsableRecords as exc:
        summary.end("no-usable-records", str(exc))
        return Failed(message=str(exc), data=summary)
    except PrefectException:
        raise  # pauses, cancellations and crashes are Prefect's to handle
    except Exception as exc:  # noqa: BLE001 (any stage failure: the run ends with its summary)
        # The failed task has logged its traceback; the run ends Failed with its summary (so
        # `tunegate run --summary` writes one for failed runs too) naming the stage.
        stage = next((n for n, s in summary.stages.items() if s.status == "failed"), "setup")
        message = f"{stage} failed: {type(exc).__name__}: {exc}"
        summary.end("failed", message)
        return Failed(message=message, data=summary)
    summary.endpoint = rollout.endpoint
    summary.note("rollout", outcome=rollout.outcome, deployment=rollout.new_deployment)
    if rollout.outcome == "rolled-back":
        message = f"rolled back {rollout.version}: {rollout.events[-1].message}"
        summary.end("rolled-back", message)
        notify_task(config.notify, "rolled-back", message, {"endpoint": rollout.endpoint})
        return Failed(message=message, data=summary)
    summary.end("completed")
    return Completed(
        message=f"registered {summary.model_version}, serving at {rollout.endpoint['url']}",
        data=summary,
    )


def _require_records(dataset: DatasetRef, count: str) -> None:
    """Stop before approval when a data stage left nothing to train on, saying why."""
    if dataset.counts.get(count, 0) > 0:
        return
    counts = ", ".join(f"{k} {v}" for k, v in dataset.counts.items())
    raise NoUsableRecords(
        f"{dataset.stage} left no usable record ({counts}); nothing to approve or train on. "
        f"Each record's reason is in {dataset.uri}/quarantine/"
    )

"""What a `retrain` run logs to its MLflow run (platforms/tracking.py), from the results in hand.

One MLflow run per flow run, in the experiment named for the model (`registry.model_name`, or
`tunegate-<task>`), named as the Prefect flow run; a retried or resumed flow run goes on in the
same one. It holds:

- tags: the flow run's id and its Prefect UI address (also the run's description, a link), the
  git commit, each data stage's content hash, the approval record's hash and decision, the
  training job, the gate's verdict, the registered version and its MLflow UI address;
- parameters: the validated config, flattened (`train.learning_rate`, `screen.toxicity.threshold`,
  ...; a webhook URL only as set or not; the `azureml` section only when a part of the run is on
  Azure ML), and every argument the trainer runs with, defaults included (`trainer.<name>`);
- metrics: each data stage's counts (`ingest.accepted`, `screen.redacted`, ...), the trainer's
  curves (`loss`, `eval_loss`, `learning_rate`, `grad_norm` by step: logged live by the trainer,
  or from the job's `trainer_state.json` when the job was reused), its throughput
  (`trainer.tokens_per_second`, ...), and every number the evaluation compared: `base.<metric>`,
  `candidate.<metric>`, `champion.<metric>`, `gate.passed` (0/1), each gate check's value and
  requirement, the bootstrap interval, PII leaks, each serving runtime's score;
- artifacts: `screening/report.md|json`, `training/loss-curve.png`, `model/README.md` (the model
  card the trainer saved, when there is one), `evaluation/report.md|json`.

The MLflow run's address (and the version's) is printed, logged, kept in the run summary and a
Prefect artifact (`mlflow-run`, `mlflow-model-version`): `{tracking.ui_url}/#/experiments/<id>/
runs/<run>`, a local store's served by `tunegate ui`.

The run ends FINISHED when the flow completes, FAILED when it ends failed (rejected data, a failed
stage, a failed gate, a rollback), KILLED when it is stopped or cancelled; never left RUNNING.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from prefect.artifacts import create_markdown_artifact
from prefect.context import FlowRunContext
from prefect.exceptions import Pause

from flows.config import PipelineConfig
from flows.summary import STOPS, RunSummary
from platforms import tracking
from platforms.approvals import ApprovalRecord
from platforms.backends import Backends
from platforms.datasheet import DataRights
from platforms.evaluation import EvalReport
from platforms.manifest import DatasetRef
from platforms.model_version import ModelVersion
from platforms.notify import flow_run_url
from platforms.tracking import RunStatus, TrackedRun
from platforms.training import TrainingJob
from screening.report import Screened
from screening.report import report_markdown as screening_markdown
from tasks.evaluation_report import report_markdown
from tasks.register import code_version

log = logging.getLogger(__name__)
_NAME = re.compile(r"[^0-9A-Za-z_\-. :/]")  # what MLflow takes in a metric's name
TRAINER_CURVES = ("loss", "eval_loss", "learning_rate", "grad_norm")
_SECRETS = ("notify.webhook_url",)  # a webhook URL holds its token: logged as set or not
PREFECT_LINK_TAG = "tunegate.flow_run_url"  # the MLflow run's way back to its Prefect flow run


class RunTracker:
    """The flow run's MLflow run: `open()` it first thing inside the flow's try (a tracking
    store that cannot be reached fails the run at setup), log each stage's results, and leave
    the `with` block to end it with the flow's outcome."""

    def __init__(self, config: PipelineConfig, backends: Backends, summary: RunSummary) -> None:
        self.config, self.backends, self.summary = config, backends, summary
        self.run: TrackedRun | None = None

    def __enter__(self) -> RunTracker:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.run is None or isinstance(exc, Pause):  # a suspended flow run comes back to it
            return
        try:
            self.run.end(self._status(exc))
        except Exception:  # the flow's own outcome is what the caller needs
            log.exception("could not end MLflow run %s", self.run.run_id)

    def _status(self, exc: BaseException | None) -> RunStatus:
        if exc is not None:
            return "KILLED" if isinstance(exc, STOPS) else "FAILED"
        if self.summary.status == "completed":
            return "FINISHED"
        return "KILLED" if self.summary.status == "cancelled" else "FAILED"

    @property
    def run_id(self) -> str | None:
        return None if self.run is None else self.run.run_id

    def open(self, run_name: str | None) -> TrackedRun:
        """Start (or resume) the run; log the config and the trainer's resolved arguments; link
        it from the flow run (a Prefect artifact) and the run summary."""
        config, flow_run_id = self.config, self.summary.flow_run_id
        prefect_url = flow_run_url(flow_run_id)
        self.run = run = tracking.start_run(
            self.backends.tracking_uri,
            config.registry.name_for(config.task.value),
            run_name,
            flow_run_id,
            {
                PREFECT_LINK_TAG: prefect_url,
                # the run's description on its MLflow page: the way back to Prefect
                "mlflow.note.content": _note(prefect_url, flow_run_id),
                "tunegate.task": config.task.value,
                "mlflow.source.git.commit": code_version(),
                "tunegate.reason": self.summary.reason or "tunegate run",
            },
            self.backends.tracking_artifact_root,
            config.tracking.ui_url,
        )
        run.log_params(config_params(config))
        self.summary.tracking_run = run.link
        log.info("MLflow run: %s%s", run.link, _served_note(run))
        if FlowRunContext.get() is None:  # outside a flow run: no Prefect run to link from
            return run
        create_markdown_artifact(
            key="mlflow-run",
            markdown=_link_markdown(
                f"MLflow run `{run.run_id}`", run.link, run, f"experiment `{run.experiment_id}`"
            ),
            description="This run's parameters, curves, metrics and reports in MLflow",
        )
        return run

    def dataset(self, stage: str, ref: DatasetRef) -> None:
        """A data stage's content hash (a tag) and counts (metrics)."""
        if self.run is not None:
            self.run.set_tags({f"tunegate.dataset.{stage}": ref.content_hash})
            self.run.log_metrics({f"{stage}.{k}": v for k, v in ref.counts.items()})

    def screened(self, screened: Screened) -> None:
        if self.run is None:
            return
        self.dataset("screen", screened.dataset)
        report = screened.report
        self.run.log_metrics({"screen.flagged": report.flagged, "screen.redacted": report.redacted})
        self.run.log_text(screening_markdown(report), "screening/report.md")
        self.run.log_text(report.model_dump_json(indent=2), "screening/report.json")

    def rights(self, rights: DataRights) -> None:
        """The inputs' licences and sources (parameters, `none` for an input without a
        licence), and every datasheet (`data/rights.json`)."""
        if self.run is None:
            return
        licences = sorted({i.licence or "none" for i in rights.inputs})
        self.run.log_params(
            {"data.licences": ", ".join(licences), "data.sources": ", ".join(rights.sources)}
        )
        self.run.set_tags({"tunegate.data.unlicensed": len(rights.unlicensed)})
        self.run.log_text(rights.model_dump_json(indent=2), "data/rights.json")

    def approved(self, approval: ApprovalRecord) -> None:
        if self.run is not None:
            self.run.set_tags(
                {
                    "tunegate.approval_hash": approval.record_hash,
                    "tunegate.approval.decision": approval.decision,
                    "tunegate.approval.mode": approval.mode.value,
                }
            )

    def trained(self, job: TrainingJob) -> None:
        """The trainer's curves (from the job's own files when it logged none here: a reused
        job trained in an earlier run), its throughput, the loss plot and the model card."""
        if self.run is None:
            return
        run, output = self.run, Path(job.output_dir)
        run.set_tags({"tunegate.training_job": job.name, "tunegate.training_reused": job.reused})
        history = log_history(output)
        if not run.history("loss"):
            for key in TRAINER_CURVES:
                points = [(h["step"], h[key]) for h in history if key in h and "step" in h]
                if points:
                    run.log_curve(key, points)
        metrics_file = output / "metrics.json"
        if metrics_file.is_file():
            numbers = json.loads(metrics_file.read_text())
            run.log_metrics({f"trainer.{k}": v for k, v in numbers.items() if _number(v)})
        with tempfile.TemporaryDirectory() as scratch:
            plot = tracking.loss_curve_png(history, Path(scratch) / "loss-curve.png")
            if plot is not None:
                run.log_file(plot, "training")
        card = output / "README.md"  # the model card the trainer (PEFT) saved with the model
        if card.is_file():
            run.log_file(card, "model")

    def evaluated(self, report: EvalReport) -> None:
        """Every number the evaluation compared, the gate's decision, and the report."""
        if self.run is None:
            return
        run = self.run
        run.log_metrics(evaluation_metrics(report))
        run.set_tags(
            {
                "tunegate.gate": report.gate.verdict,
                "tunegate.champion_version": report.champion_version,
                "tunegate.primary_metric": report.primary_metric,
            }
        )
        run.log_text(report_markdown(report), "evaluation/report.md")
        run.log_text(report.model_dump_json(indent=2), "evaluation/report.json")

    def registered(self, version: ModelVersion) -> None:
        """The version's address: a tag of the run, the summary, the log and a Prefect artifact
        (the version's page holds its model card; its run links back to this one)."""
        if self.run is None:
            return
        tags: dict[str, str] = {"tunegate.model_version": f"{version.name}:{version.version}"}
        if self.run.ui is not None:
            url = tracking.model_version_url(self.run.ui, version.name, version.version)
            tags["tunegate.model_version_url"] = url
            self.summary.model_version_url = url
            log.info("MLflow model version: %s%s", url, _served_note(self.run))
            if FlowRunContext.get() is not None:
                create_markdown_artifact(
                    key="mlflow-model-version",
                    markdown=_link_markdown(
                        f"Model `{version.name}` version {version.version}",
                        url,
                        self.run,
                        "its model card, lineage and aliases",
                    ),
                    description="The registered version in MLflow",
                )
        self.run.set_tags(tags)

    def rolled_out(self, outcome: str) -> None:
        if self.run is not None:
            self.run.set_tags({"tunegate.rollout": outcome})


def config_params(config: PipelineConfig) -> dict[str, Any]:
    """The validated config flattened (`section.field`), and the trainer's every argument as it
    will run, its task's tuned defaults included (`trainer.<name>`). The `azureml` section only
    when some part of the run is on Azure ML: a local run's parameters are its own."""
    dump = config.model_dump(mode="json")
    if not config.backend_settings().uses_azureml:
        dump.pop("azureml", None)
    params = tracking.flat_params(dump)
    for key in _SECRETS:
        if params.get(key) is not None:
            params[key] = "(set)"
    resolved = dataclasses.asdict(config.train.resolved_args(config.task.value))
    trainer = {
        f"trainer.{k}": v
        for k, v in resolved.items()
        if k not in ("data_dir", "output_dir")  # the job's own folders: the trainer logs them
    }
    return {**params, **trainer}


def _note(prefect_url: str | None, flow_run_id: str | None) -> str:
    """The MLflow run's description: where its Prefect flow run is."""
    if prefect_url:
        return f"Prefect flow run: [{flow_run_id}]({prefect_url})"
    return f"Prefect flow run {flow_run_id}" if flow_run_id else "a tunegate run"


def _served_note(run: TrackedRun) -> str:
    return " (open `tunegate ui` to serve it)" if run.served_by_tunegate_ui else ""


def _link_markdown(what: str, url: str, run: TrackedRun, detail: str) -> str:
    """A Prefect artifact's clickable link to MLflow (a plain line when it is no address)."""
    where = f"tracking `{_shown_uri(run.uri)}`"
    if not url.startswith("http"):
        return f"{what} ({detail}, {where}): {url}"
    served = "; run `tunegate ui` to serve this address" if run.served_by_tunegate_ui else ""
    return f"**[{what}]({url})** ({detail}, {where}{served})\n\n<{url}>"


def evaluation_metrics(report: EvalReport) -> dict[str, float]:
    """Base, candidate and champion metrics (prefixed), the gate's decision (0/1) and checks,
    and every other number the evaluation compared."""
    metrics: dict[str, Any] = {}
    for who in ("base", "candidate", "champion"):
        metrics |= {f"{who}.{k}": v for k, v in (getattr(report, who) or {}).items()}
    metrics["gate.passed"] = report.gate.passed
    for check in report.gate.checks:
        name = _check_key(check.name)
        metrics |= {
            f"gate.{name}.value": check.value,
            f"gate.{name}.required": check.required,
            f"gate.{name}.passed": check.passed,
        }
    if report.interval is not None:
        metrics["gate.interval.low"], metrics["gate.interval.high"] = report.interval
    metrics["evaluation.test_records"] = report.test_records
    metrics["evaluation.pii_leaks"] = report.pii_leaks
    if report.output_pii is not None:
        metrics["evaluation.memorised_pii"] = report.output_pii.memorised
        metrics["evaluation.invented_pii_rate"] = report.output_pii.invented_rate
    if report.serving is not None:
        metrics |= {f"serving.{k}": v for k, v in report.serving.scores.items()}
    return {_NAME.sub("_", k): v for k, v in metrics.items() if _number(v)}


def _check_key(name: str) -> str:
    """A gate check's name as a metric key: `f1 >= 50.0` is `f1_at_least_50.0`, `f1 gain over
    base (%)` is `f1_gain_over_base_pct`."""
    words = name.replace(">=", " at least ").replace("<=", " at most ").replace("%", "pct")
    return re.sub(r"[^0-9A-Za-z.]+", "_", words).strip("_")


def log_history(model_dir: Path) -> list[dict[str, Any]]:
    """The trainer's log history (`trainer_state.json`): loss, eval loss, learning rate by step;
    else metrics.json's loss curve; empty when neither is there."""
    state = model_dir / "trainer_state.json"
    if state.is_file():
        return list(json.loads(state.read_text()).get("log_history", []))
    metrics = model_dir / "metrics.json"
    if metrics.is_file():
        return list(json.loads(metrics.read_text()).get("loss_curve", []))
    return []


def _number(value: Any) -> bool:
    return isinstance(value, int | float)


def _shown_uri(uri: str) -> str:
    """A tracking URI without credentials (a database URL's password)."""
    return re.sub(r"//[^/@]*@", "//", uri)

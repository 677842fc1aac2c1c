"""The Azure ML training backend: the same `trainer/` code as a command job on a compute cluster.

A job is named after its spec (run and data hash), so a retried flow finds the job it submitted
and waits for it instead of submitting it again; a finished one is reused. Only a job that
failed or was cancelled is submitted again, as `<name>-r2`, `<name>-r3`, ...

What a job uses from the workspace (cluster, datastore, Data asset, a base model's input type):
platforms/azureml/workspace_assets.py; its log, followed here: platforms/azureml/job_logs.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from azure.core.exceptions import ResourceNotFoundError

from platforms.azureml import base_model, entities
from platforms.azureml.client import retrying, status_text
from platforms.azureml.config import AzureMLConfig
from platforms.azureml.job_logs import LOG_DRAIN_SECONDS, LogStreamer
from platforms.azureml.memory_check import check_memory
from platforms.azureml.workspace_assets import WorkspaceAssets
from platforms.model_version import ModelRegistry, ModelVersion
from platforms.training import Evaluation, JobStatus, TrainingJob, TrainSpec
from trainer.args import OUTPUT_SCREEN, PREDICTIONS, SCORES
from trainer.model_paths import is_weight_file

_STATUS: dict[str, JobStatus] = {
    "Completed": "completed",
    "Failed": "failed",
    "NotResponding": "failed",
    "Canceled": "cancelled",
}
log = logging.getLogger(__name__)
MAX_RESUBMITS = 20
OUTPUTS_FETCHED = "OUTPUTS_FETCHED"  # what the stages read, weights left out, is here
MODEL_DOWNLOADED = "MODEL_DOWNLOADED"  # the whole model output, weights included, is here


def job_status(service_status: Any) -> JobStatus:
    """tunegate's status for an Azure ML job status (unknown ones count as running)."""
    service_status = status_text(service_status)
    if service_status in _STATUS:
        return _STATUS[service_status]
    return "running"


class AzureMLTrainingBackend(WorkspaceAssets):
    """Submits, follows, downloads and cancels command jobs through an `MLClient`."""

    name = "azureml"

    def __init__(
        self,
        ml_client: Any,
        config: AzureMLConfig,
        local_root: Path,
        poll_seconds: float = 30.0,
        storage_account: str | None = None,
    ) -> None:
        """`storage_account`: the store's account (azure.account_name), for the datastore
        tunegate creates when azureml.datastore_account is unset."""
        self.client = ml_client
        self.config = config
        self.local_root = local_root
        self.poll_seconds = poll_seconds
        self.storage_account = storage_account

    def submit(self, spec: TrainSpec) -> TrainingJob:
        return self._reattach_or_create(spec.name, "training", lambda n: self._create(spec, n))

    def _reattach_or_create(
        self, base: str, kind: str, create: Callable[[str], TrainingJob]
    ) -> TrainingJob:
        """The running or completed job `base` (or its latest resubmission, `base-rN`), else a
        new one from `create(name)`: a failed job is submitted again under the next name."""
        for attempt in range(1, MAX_RESUBMITS + 1):
            name = base if attempt == 1 else f"{base}-r{attempt}"
            existing = self._get(name)
            if existing is None:
                return create(name)
            status = job_status(existing.status)
            if status in ("running", "completed"):
                return self._job(name, status, existing, reused=True)
        raise RuntimeError(
            f"{kind} job {base} failed {MAX_RESUBMITS} times; see its runs in the studio"
        )

    def status(self, job: TrainingJob) -> JobStatus:
        found = retrying(lambda: self.client.jobs.get(job.name), f"get job {job.name}")
        return job_status(found.status)

    def wait(self, job: TrainingJob, on_log: Callable[[str], None]) -> TrainingJob:
        """Follow the job's log and status until it ends; cancel it if this wait is interrupted."""
        try:
            streamer = LogStreamer(self.client, job.name, on_log)
            streamer.start()
            last = ""
            while True:
                found = retrying(lambda: self.client.jobs.get(job.name), f"get job {job.name}")
                if status_text(found.status) != last:
                    last = status_text(found.status)
                    on_log(f"job {job.name}: {last}")
                status = job_status(found.status)
                if status != "running":
                    # the log's last lines: `jobs.stream` returns once it has printed them and
                    # seen the end (on a busy machine that can take longer than one poll)
                    streamer.join(timeout=max(self.poll_seconds, LOG_DRAIN_SECONDS))
                    return job.model_copy(update={"status": status})
                if streamer.is_alive():
                    streamer.join(timeout=self.poll_seconds)
                else:
                    time.sleep(self.poll_seconds)
        except BaseException:  # cancelled flow, Ctrl-C, SIGTERM: never leave a cluster busy
            self.cancel(job)
            raise

    def fetch_outputs(self, job: TrainingJob) -> Path:
        """Download what the stages read of the job's model output, once: every file but the
        weights (model_info.json, metrics.json, the tokenizer and configs). The weights stay in
        the job's output, where the evaluation job mounts them and the registry registers them
        from (`entities.job_output`); a failed job raises with its studio link."""
        if job.status != "completed":
            raise RuntimeError(f"training job {job.name} is {job.status}; see {job.log_path}")
        target = Path(job.output_dir)
        if not (target / OUTPUTS_FETCHED).exists():
            retrying(
                lambda: self._download_output(
                    job.name, entities.MODEL_OUTPUT, target, weights=False
                ),
                f"download {job.name}",
            )
            (target / OUTPUTS_FETCHED).touch()
        return target

    def fetch_model(self, job: TrainingJob) -> Path:
        """The job's whole model output here, weights included, once: only for what loads the
        model on this machine (a local registry, local evaluation); never in an Azure ML-only
        run."""
        self.fetch_outputs(job)
        target = Path(job.output_dir)
        if not (target / MODEL_DOWNLOADED).exists():
            retrying(
                lambda: self.client.jobs.download(
                    job.name,
                    output_name=entities.MODEL_OUTPUT,
                    download_path=str(target.parents[1]),
                ),
                f"download {job.name}",
            )
            (target / MODEL_DOWNLOADED).touch()
        return target

    def _download_output(self, job_name: str, output: str, target: Path, weights: bool) -> None:
        """The files of a job's named output into `target`, weight files left out unless
        `weights`. `jobs.download` takes a whole output; this lists the output's blobs through the
        SDK's own datastore helpers (those `jobs.download` uses) and downloads the others."""
        from azure.ai.ml._artifacts._artifact_utilities import get_datastore_info
        from azure.ai.ml._utils._storage_utils import AzureMLDatastorePathUri, get_storage_client

        uri = self.client.jobs._get_named_output_uri(job_name, output).get(output)
        if uri is None:
            raise RuntimeError(f"job {job_name} has no output {output!r} to download")
        parsed = AzureMLDatastorePathUri(uri)
        storage = get_storage_client(**get_datastore_info(self.client.datastores, parsed.datastore))
        prefix = parsed.path.rstrip("/") + "/"
        target.mkdir(parents=True, exist_ok=True)
        for blob in storage.list(prefix):
            relative = blob[len(prefix) :]
            if not relative or (not weights and is_weight_file(relative)):
                continue
            destination = target / relative
            storage.download(starts_with=blob, destination=str(destination.parent))

    def evaluate(
        self,
        data_dir: str,
        job: TrainingJob,
        champion: ModelVersion | None,
        registry: ModelRegistry,
        on_log: Callable[[str], None],
        max_test_records: int = 0,
        batch_size: int = 32,
        screen: dict[str, Any] | None = None,
    ) -> Evaluation:
        """Predict the test split of `data_dir` with the base model (the one the job's
        `model_info.json` names), the training job's model and `champion` (its model asset,
        mounted: nothing is downloaded here) in an evaluation job on the cluster, which scores
        them and screens the candidate's outputs under `screen` there; follow it, download its
        predictions and reports (`trainer.args.EVALUATION_FILES`, nothing else) and return
        them. The job of the same inputs is reattached to (its output downloaded once), a
        failed one submitted again, as training jobs are."""
        folder = self.evaluation_job(
            data_dir,
            job,
            champion.path if champion is not None else None,
            _base_model(job),
            on_log,
            max_test_records,
            batch_size,
            screen,
        )
        return read_evaluation(folder)

    def evaluation_job(
        self,
        data_dir: str,
        job: TrainingJob,
        champion: str | None,
        base: str | None,
        on_log: Callable[[str], None],
        max_test_records: int = 0,
        batch_size: int = 32,
        screen: dict[str, Any] | None = None,
    ) -> Path:
        """The folder here holding the evaluation job's output (its predictions, scores and
        screen) for `champion`, a model asset or a folder uploaded, `base`, and `screen` (the
        run's screen config as JSON; None: the screen's defaults)."""

        def create(name: str) -> TrainingJob:
            self._ensure_compute()
            evaluation = entities.evaluation_job(
                self.config,
                entities.stage_evaluation_code(self.local_root / name / "code", screen),
                self._data_input(data_dir),
                entities.job_output(job.name),
                champion,
                base,
                name=name,
                max_test_records=max_test_records,
                batch_size=batch_size,
                model_type=self._model_type(base),
            )
            created = retrying(
                lambda: self.client.jobs.create_or_update(evaluation), f"submit {name}"
            )
            return self._job(name, "running", created, reused=False)

        key = evaluation_job_name(
            data_dir,
            job.name,
            champion,
            base,
            max_test_records,
            batch_size,
            self._dtype,
            screen or {},  # another screen config is another screen of the outputs
        )
        handle = self._reattach_or_create(key, "evaluation", create)
        folder = self.local_root / handle.name / "named-outputs" / entities.EVAL_OUTPUT
        if not (folder / PREDICTIONS).exists():
            done = self.wait(handle, on_log)
            if done.status != "completed":
                raise RuntimeError(
                    f"evaluation job {done.name} is {done.status}; see {done.log_path}"
                )
            retrying(
                lambda: self.client.jobs.download(
                    done.name,
                    output_name=entities.EVAL_OUTPUT,
                    download_path=str(self.local_root / done.name),
                ),
                f"download {done.name}",
            )
        return folder

    @property
    def _dtype(self) -> str:
        """The dtype the evaluation job predicts in: the endpoint's (azureml.endpoint.dtype)."""
        return self.config.endpoint.dtype

    def cancel(self, job: TrainingJob) -> None:
        with contextlib.suppress(ResourceNotFoundError):
            retrying(lambda: self.client.jobs.begin_cancel(job.name), f"cancel {job.name}")

    def _create(self, spec: TrainSpec, name: str) -> TrainingJob:
        model = spec.args.get("model")
        base_model.check_model(model)
        # a job that cannot fit in its GPUs' memory is refused before it is submitted
        log.info("%s", check_memory(spec.args, self.config).message)
        model_type = self._model_type(model)
        self._ensure_compute()
        data = self._data_input(spec.data_dir)
        code = entities.stage_training_code(self.local_root / name / "code")
        job = entities.training_job(spec, self.config, code, data, name=name, model_type=model_type)
        created = retrying(lambda: self.client.jobs.create_or_update(job), f"submit {name}")
        folder = self.local_root / name
        (folder / "job.json").write_text(
            json.dumps({"name": name, "spec": spec.model_dump(), "studio": _studio(created)})
        )
        return self._job(name, "running", created, reused=False)

    def _get(self, name: str) -> Any | None:
        try:
            return retrying(lambda: self.client.jobs.get(name), f"get job {name}")
        except ResourceNotFoundError:
            return None

    def _job(self, name: str, status: JobStatus, found: Any, *, reused: bool) -> TrainingJob:
        folder = self.local_root / name
        folder.mkdir(parents=True, exist_ok=True)
        return TrainingJob(
            name=name,
            backend=self.name,
            status=status,
            output_dir=str(folder / "named-outputs" / entities.MODEL_OUTPUT),
            log_path=_studio(found) or f"azureml job {name}",
            reused=reused,
        )


def read_evaluation(folder: Path) -> Evaluation:
    """An evaluation job's downloaded output: its predictions, and its scores and screen of the
    candidate's outputs where it wrote them (a job of an older tunegate wrote predictions only:
    the evaluate stage then scores and screens them itself)."""
    made = json.loads((folder / PREDICTIONS).read_text())
    scores = output_screen = None
    if (folder / SCORES).exists():
        scores = json.loads((folder / SCORES).read_text())["models"]
    if (folder / OUTPUT_SCREEN).exists():
        output_screen = json.loads((folder / OUTPUT_SCREEN).read_text())
    return Evaluation(predictions=made["predictions"], scores=scores, output_screen=output_screen)


def _base_model(job: TrainingJob) -> str | None:
    """The base model a trained model records in its `model_info.json` (fetched with it)."""
    from trainer.modeling import MODEL_INFO  # transformers: only when a job is evaluated

    return json.loads((Path(job.output_dir) / MODEL_INFO).read_text())["base_model"]


def evaluation_job_name(data_dir: str, *inputs: Any) -> str:
    """The evaluation job of these inputs: the same ones are the same job (reused once done)."""
    key = json.dumps([data_dir, *inputs])
    return f"eval-{hashlib.sha256(key.encode()).hexdigest()[:20]}"


def _studio(job: Any) -> str | None:
    return getattr(job, "studio_url", None)

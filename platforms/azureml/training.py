"""The Azure ML training backend: the same `trainer/` code as a command job on a compute cluster.

A job is named after its spec (run and data hash), so a retried flow finds the job it submitted
and waits for it instead of submitting it again; a finished one is reused. Only a job that
failed or was cancelled is submitted again, as `<name>-r2`, `<name>-r3`, ...
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from platforms.azureml import base_model, entities, vm_sizes
from platforms.azureml.client import retrying, status_text
from platforms.azureml.config import AzureMLConfig
from platforms.blob import is_azure
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
MAX_RESUBMITS = 20
log = logging.getLogger(__name__)
OUTPUTS_FETCHED = "OUTPUTS_FETCHED"  # what the stages read, weights left out, is here
MODEL_DOWNLOADED = "MODEL_DOWNLOADED"  # the whole model output, weights included, is here


def job_status(service_status: Any) -> JobStatus:
    """tunegate's status for an Azure ML job status (unknown ones count as running)."""
    service_status = status_text(service_status)
    if service_status in _STATUS:
        return _STATUS[service_status]
    return "running"


class AzureMLTrainingBackend:
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
            streamer = _LogStreamer(self.client, job.name, on_log)
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

    def _ensure_compute(self) -> None:
        """The configured cluster: checked against the workspace's cluster of that name (same
        size and tier, enough nodes), else against the sizes its region offers, and created."""
        compute, launch = self.config.compute, self.config.launch
        try:
            found = retrying(
                lambda: self.client.compute.get(compute.name), f"get compute {compute.name}"
            )
        except ResourceNotFoundError:
            found = None
        if found is not None:
            vm_sizes.check_existing(found, compute, launch)
            return
        self._check_size_offered()
        cluster = entities.compute_cluster(compute)
        retrying(
            lambda: self.client.compute.begin_create_or_update(cluster).result(),
            f"create compute {compute.name}",
        )

    def _check_size_offered(self) -> None:
        """The workspace region's VM sizes (`list_sizes`), when this identity may list them: a
        size it does not offer, or with fewer GPUs than the launch asks, is an error naming the
        field; a refused or failed listing leaves the check to the service."""
        try:
            region = retrying(
                lambda: self.client.workspaces.get(self.client.workspace_name).location,
                "get workspace",
            )
            sizes = retrying(
                lambda: list(
                    self.client.compute.list_sizes(location=region, compute_type="AmlCompute")
                ),
                "list VM sizes",
            )
        except HttpResponseError as error:
            log.warning("cannot list the workspace's VM sizes (%s): size not checked", error.reason)
            return
        vm_sizes.check_offered(sizes, self.config.compute, self.config.launch, str(region))

    def _model_type(self, model: str | None) -> base_model.ModelType | None:
        """The input type of a model asset: configured, or (auto) a workspace model's own type,
        asked of the workspace; a model catalog's is mlflow_model. None: not an asset."""
        if model is None or not base_model.is_model_asset(model):
            return None
        configured = self.config.job.model_input_type
        if configured != "auto" or base_model.is_catalog_model(model):
            return base_model.default_type(model, configured)
        reference = model.removeprefix("azureml:")
        version: str | None = None
        label: str | None = None
        if "@" in reference:
            name, label = reference.split("@", 1)
        else:
            name, version = reference.split(":", 1)
        try:
            found = retrying(
                lambda: self.client.models.get(name, version=version, label=label),
                f"get model {reference}",
            )
        except ResourceNotFoundError:
            raise ValueError(
                f"train.model {model}: no such model in workspace "
                f"{self.config.workspace.workspace_name or 'of azureml.workspace'}"
            ) from None
        return "mlflow_model" if found.type == "mlflow_model" else "custom_model"

    def _ensure_datastore(self, uri: str) -> str:
        """The datastore over the store's container: found (and checked to be over it), or
        created credential-less when azureml.create_datastore allows; a ValueError naming the
        field to set otherwise."""
        container = entities.container_of(uri)
        name = entities.datastore_name(uri, self.config.datastore)
        account = (
            self.config.datastore_account
            or self.storage_account
            or entities.account_of(os.environ.get("AZURE_STORAGE_CONNECTION_STRING"))
        )
        try:
            found = retrying(lambda: self.client.datastores.get(name), f"get datastore {name}")
        except ResourceNotFoundError:
            found = None
        if found is not None:
            entities.check_datastore(found, container, account)
            return name
        if not self.config.create_datastore:
            raise ValueError(
                f"azureml.datastore {name} does not exist in the workspace: create it over "
                f"container {container} (`tunegate azureml export` writes datastore.yml), set "
                "azureml.datastore to one that is, or set azureml.create_datastore: true"
            )
        if account is None:
            raise ValueError(
                f"the datastore {name} over container {container} does not exist and the "
                "storage account is unknown: set azureml.datastore_account (the account of the "
                "store's container)"
            )
        datastore = entities.blob_datastore(name, account, container)
        retrying(
            lambda: self.client.datastores.create_or_update(datastore), f"create datastore {name}"
        )
        return name

    def _data_input(self, data_dir: str) -> str:
        """An Azure ML reference for the split dataset: a Data asset versioned by content hash."""
        if data_dir.startswith(("azureml:", "https://", "http://")):
            return data_dir
        name = self.config.data_asset
        if is_azure(data_dir):
            source = entities.datastore_uri(data_dir, self._ensure_datastore(data_dir))
            version = _hash_of(data_dir, default=source.rstrip("/").rsplit("/", 1)[-1])
        else:
            source = data_dir
            version = _hash_of(data_dir, default=Path(data_dir).name)
        try:
            retrying(lambda: self.client.data.get(name, version=version), f"get data {name}")
        except ResourceNotFoundError:
            asset = entities.data_asset(name, version, source, f"tunegate split {version}")
            retrying(lambda: self.client.data.create_or_update(asset), f"register data {name}")
        return f"azureml:{name}:{version}"

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


def _hash_of(data_dir: str, default: str) -> str:
    """The split's content hash from its manifest (the dataset folder name when unreadable)."""
    import fsspec

    try:
        with fsspec.open(data_dir.rstrip("/") + "/manifest.json", "r") as f:
            return entities.data_version(str(json.load(f)["content_hash"]))
    except (OSError, KeyError, ValueError):
        return entities.data_version(default)


LOG_DRAIN_SECONDS = 60.0


class _LogStreamer(threading.Thread):
    """`jobs.stream()` in a thread, its printed log lines sent to `on_log` instead of stdout."""

    def __init__(self, client: Any, name: str, on_log: Callable[[str], None]) -> None:
        super().__init__(daemon=True, name=f"azureml-log-{name}")
        self.client, self.job_name, self.on_log = client, name, on_log

    def run(self) -> None:
        with thread_stdout(self.on_log):
            try:
                self.client.jobs.stream(self.job_name)
            except Exception as error:  # noqa: BLE001 - the status poll reports the job's end
                self.on_log(f"log streaming stopped: {type(error).__name__}: {error}")


_redirects: dict[int, Callable[[str], None]] = {}
_redirect_lock = threading.Lock()


class _ThreadRoutedStdout(io.TextIOBase):
    """stdout that sends lines written by redirected threads to their callbacks."""

    def __init__(self, original: Any) -> None:
        self.original = original
        self.partial: dict[int, str] = {}

    def write(self, text: str) -> int:
        target = _redirects.get(threading.get_ident())
        if target is None:
            return self.original.write(text)
        buffered = self.partial.pop(threading.get_ident(), "") + text
        *lines, rest = buffered.split("\n")
        for line in lines:
            if line.strip():
                target(line)
        if rest:
            self.partial[threading.get_ident()] = rest
        return len(text)

    def flush(self) -> None:
        self.original.flush()


@contextlib.contextmanager
def thread_stdout(on_log: Callable[[str], None]) -> Iterator[None]:
    """Within the block, send each line the calling thread writes to stdout to `on_log` (blank
    lines dropped, a last line without its newline sent on exit); other threads keep writing to
    stdout. The process gets its own stdout back once no thread is redirected."""
    with _redirect_lock:
        if not isinstance(sys.stdout, _ThreadRoutedStdout):
            sys.stdout = _ThreadRoutedStdout(sys.stdout)
        _redirects[threading.get_ident()] = on_log
    try:
        yield
    finally:
        with _redirect_lock:
            _redirects.pop(threading.get_ident(), None)
            routed = sys.stdout
            if isinstance(routed, _ThreadRoutedStdout):
                last = routed.partial.pop(threading.get_ident(), "")
                if last.strip():  # a last line printed without its newline
                    on_log(last)
                if not _redirects:  # nobody is redirected: the process gets its stdout back
                    sys.stdout = routed.original

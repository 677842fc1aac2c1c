"""register: a registry version with its lineage; the `challenger` alias (and `champion`).

Lineage answers "where did this model come from": the dataset hashes of every stage, the approval
record, the evaluation report (typed, an `EvalReport`), the flow run, the code version and the
config hash. It is built here (`lineage_of`), where the registration is decided, from the run's
typed results.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field

from platforms.approvals import ApprovalRecord
from platforms.backends import Backends, PlatformKind
from platforms.datasheet import DataRights
from platforms.evaluation import EvalReport
from platforms.lineage import Lineage
from platforms.manifest import DatasetRef
from platforms.model_version import ModelRegistry, ModelVersion
from platforms.training import TrainingJob
from screening.report import ScreenReport
from serving import runtimes
from serving.runtimes import ServingChoice
from tasks.model_card import model_card

_ROOT = Path(__file__).resolve().parents[1]


class RegisterConfig(BaseModel):
    """Where and under which name models are registered."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model_name: str | None = Field(
        None, description="Registered model name (default: tunegate-<task>).", pattern=r"^[\w.-]+$"
    )
    backend: PlatformKind = Field(
        PlatformKind.local,
        description="local: MLflow's Model Registry on the store's tracking database (or "
        "tracking.uri); azureml: model assets in the "
        "azureml section's workspace (aliases as tags).",
    )
    promote: bool = Field(
        True,
        description="Make a passing candidate the champion at registration. Set false when a "
        "rollout stage moves the champion alias with the traffic.",
    )

    def name_for(self, task_type: str) -> str:
        return self.model_name or f"tunegate-{task_type}"


def code_version() -> str:
    """The git commit of this checkout, or 'unknown' outside a repository."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip()


def lineage_of(
    datasets: dict[str, DatasetRef],
    approval: ApprovalRecord,
    job: TrainingJob,
    report: EvalReport,
    *,
    flow_run_id: str | None,
    tracking_run_id: str | None,
    config_hash: str,
    training_backend: str,
    reason: str | None = None,
    rights: DataRights | None = None,
) -> Lineage:
    """Where a registered model came from: data hashes, the inputs' datasheets, approval,
    evaluation, run (Prefect's and MLflow's) and config, from the run's typed results."""
    return Lineage(
        datasets={stage: ref.content_hash for stage, ref in datasets.items()},
        approval=approval,
        approval_hash=approval.record_hash,  # of the signed record, as stored
        evaluation=report,
        flow_run_id=flow_run_id,
        tracking_run_id=tracking_run_id,
        config_hash=config_hash,
        training_job=job.name,
        training_backend=training_backend,
        reason=reason,
        inputs=rights.inputs if rights is not None else [],
    )


def run_register(
    registry: ModelRegistry,
    name: str,
    source: Path | str,
    metrics: dict[str, float],
    lineage: Lineage,
    promote: bool,
    screen: ScreenReport | None = None,
    split_counts: dict[str, int] | None = None,
) -> ModelVersion:
    """Register `source` as a version of `name` (the `challenger`; also the `champion` when
    `promote`) with its model card (tasks/model_card.py) as the model folder's README.md. A
    re-run over the same data and config trains nothing new: the registry returns the version
    its training job was registered as."""
    lineage = lineage.model_copy(update={"code_version": code_version()})
    card = card_for(name, source, lineage, screen, split_counts)
    version = registry.register(name, source, metrics, lineage, card)
    registry.set_alias(name, "challenger", version.version)
    if promote:
        registry.set_alias(name, "champion", version.version)
    return version


def card_for(
    name: str,
    source: Path | str,
    lineage: Lineage,
    screen: ScreenReport | None,
    split_counts: dict[str, int] | None,
) -> str | None:
    """The model card of `source` (a trained model folder here; None for a job's output kept
    elsewhere, or a folder that is no trained model): its task and base model from its
    model_info.json."""
    if not isinstance(source, Path):
        return None
    from trainer.modeling import MODEL_INFO, find_model_dir

    try:
        info = json.loads((find_model_dir(source) / MODEL_INFO).read_text())
    except (ValueError, OSError):
        return None
    if not isinstance(info, dict) or "task" not in info:
        return None
    return model_card(
        name,
        info["task"],
        info.get("base_model", "unknown"),
        lineage,
        adapter=bool(info.get("adapter")),
        screen=screen,
        split_counts=split_counts,
    )


@contextmanager
def with_serving_files(model_dir: Path, serving: ServingChoice) -> Iterator[Path]:
    """A copy of `model_dir` with the chosen runtime's exported folder (`serving/<runtime>/`) and
    `serving.json`, staged in a temporary folder beside the evaluation's export for as long as
    the block runs (the training output stays as it was; two registrations at once never share
    a folder)."""
    if serving.exported is None or serving.folder is None:
        raise ValueError(f"the {serving.runtime} choice names no exported folder to stage")
    with tempfile.TemporaryDirectory(prefix="registered-", dir=serving.folder) as scratch:
        staged = Path(scratch) / "model"
        record = runtimes.stage(model_dir, serving.exported, serving, staged)
        if record["sha256"] != serving.sha256:
            raise ValueError(f"{serving.exported} changed since it was evaluated")
        yield staged


@task(name="register", cache_policy=NONE)
def register_task(
    backends: Backends,
    name: str,
    model_dir: str,
    metrics: dict[str, float],
    lineage: Lineage,
    promote: bool,
    serving: ServingChoice | None = None,
    screen: ScreenReport | None = None,
    split_counts: dict[str, int] | None = None,
) -> ModelVersion:
    """Register the candidate with its lineage, and the runtime the evaluation chose for it
    (`serving`, its exported files beside the model). A model served by an optimized runtime is
    registered from the folder staged here with those files (uploaded to Azure ML's registry,
    not its training job's output, which has none). `screen` and `split_counts` go into its
    model card beside the lineage."""
    with ExitStack() as staged:
        source: Path | str
        if serving is not None and serving.exported is not None:
            source = staged.enter_context(with_serving_files(Path(model_dir), serving))
        else:
            source = backends.model_source(model_dir, lineage.training_job)
        version = run_register(
            backends.registry, name, source, metrics, lineage, promote, screen, split_counts
        )
    create_markdown_artifact(
        key="model-version",
        markdown=f"### {version.name} v{version.version}\n\n"
        + "\n".join(f"- **{k}**: `{v}`" for k, v in version.lineage.tags().items()),
    )
    return version

"""Where a registered model came from: the typed lineage a registry keeps beside each version.

The flow builds a `Lineage` from the typed results it holds (dataset refs, the signed approval
record, the evaluation report, the training job); the registries (local and Azure ML) store it
whole and read its fields: a training job is registered once (`training_job`), Azure ML tags
carry the scalar fields (`tags()`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from platforms.approvals import ApprovalRecord


class Lineage(BaseModel):
    """Data hashes, approval, evaluation, run, code and config of one registered version. Every
    field has a default so versions registered by hand (or by older releases) still read."""

    model_config = ConfigDict(frozen=True)
    datasets: dict[str, str] = Field(
        default_factory=dict, description="Content hash of each data stage's dataset."
    )
    approval: ApprovalRecord | None = Field(None, description="The signed approval of the data.")
    approval_hash: str | None = Field(None, description="Hash of the signed approval record.")
    evaluation: dict[str, Any] = Field(
        default_factory=dict,
        description="The evaluation report (every compared number, the gate's decision, the "
        "serving runtime's choice), as recorded.",
    )
    flow_run_id: str | None = None
    tracking_run_id: str | None = Field(
        None,
        description="The run's MLflow run id (platforms/tracking.py): its parameters, "
        "curves and reports; a registered version links to it.",
    )
    config_hash: str | None = Field(None, description="sha256 of the validated run config.")
    training_job: str | None = Field(None, description="The job that trained the version.")
    training_backend: str | None = Field(None, description="Where it trained (train.backend).")
    code_version: str | None = Field(None, description="The git commit that registered it.")

    def tags(self) -> dict[str, str]:
        """The scalar fields, as strings (what a registry can filter on)."""
        scalars = self.model_dump(mode="json", exclude_none=True)
        return {k: str(v) for k, v in scalars.items() if isinstance(v, str | int | float | bool)}

    def same_job(self, other: Lineage) -> bool:
        """Whether both came from one training job (it is registered once)."""
        return self.training_job is not None and self.training_job == other.training_job

"""Where a registered model came from: the typed lineage a registry keeps beside each version.

The register stage builds a `Lineage` from the typed results of the run (dataset refs, the signed
approval record, the `EvalReport`, the training job: tasks/register.py `lineage_of`); the
registries (local and Azure ML) store it whole and read its fields: a training job is registered
once (`training_job`), Azure ML tags carry the scalar fields (`tags()`).

A record written by an earlier release kept its evaluation as a plain dict: it is validated into
an `EvalReport` when read (None when it no longer validates, or was empty), and written back
exactly as it was stored, so a version record signed then still verifies.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_serializer,
    model_serializer,
    model_validator,
)

from platforms.approvals import ApprovalRecord
from platforms.datasheet import InputRights
from platforms.evaluation import EvalReport

# What a registered version keeps of the report: the loss curve lives in the run's MLflow run.
_NOT_KEPT = {"loss_curve"}


class Lineage(BaseModel):
    """Data hashes, approval, evaluation, run, code and config of one registered version. Every
    field has a default so versions registered by hand (or by older releases) still read."""

    model_config = ConfigDict(frozen=True)
    datasets: dict[str, str] = Field(
        default_factory=dict, description="Content hash of each data stage's dataset."
    )
    approval: ApprovalRecord | None = Field(None, description="The signed approval of the data.")
    approval_hash: str | None = Field(None, description="Hash of the signed approval record.")
    evaluation: EvalReport | None = Field(
        None,
        description="The evaluation report (every compared number, the gate's decision, the "
        "serving runtime's choice); None when the version was registered without one.",
    )
    flow_run_id: str | None = None
    reason: str | None = Field(
        None,
        description="Why the run that trained it started: the schedule, a person, new data or "
        "drift (with the drifted signals), as its trigger said.",
    )
    tracking_run_id: str | None = Field(
        None,
        description="The run's MLflow run id (platforms/tracking.py): its parameters, "
        "curves and reports; a registered version links to it.",
    )
    config_hash: str | None = Field(None, description="sha256 of the validated run config.")
    training_job: str | None = Field(None, description="The job that trained the version.")
    training_backend: str | None = Field(None, description="Where it trained (train.backend).")
    code_version: str | None = Field(None, description="The git commit that registered it.")
    inputs: list[InputRights] = Field(
        default_factory=list,
        description="The inputs it was trained on with their datasheets (source, licence, "
        "owner, basis); written only when known, so older records still verify.",
    )
    # (the report read, the dict it was read from): written back as read (see the docstring)
    _stored_evaluation: tuple[EvalReport | None, dict[str, Any]] | None = PrivateAttr(None)

    @model_validator(mode="wrap")
    @classmethod
    def _evaluation_as_stored(
        cls, data: Any, handler: ModelWrapValidatorHandler[Lineage]
    ) -> Lineage:
        stored = data.get("evaluation") if isinstance(data, dict) else None
        if not isinstance(stored, dict):
            return handler(data)
        try:
            report = EvalReport.model_validate(stored) if stored else None
        except ValidationError:  # an older release's report: kept as stored, read as None
            report = None
        lineage = handler({**data, "evaluation": report})
        if _json(stored) != _json(_as_stored(report)):  # written otherwise then: kept as it was
            lineage._stored_evaluation = (report, stored)
        return lineage

    @field_serializer("evaluation")
    def _evaluation_dict(self, report: EvalReport | None) -> dict[str, Any]:
        if self._stored_evaluation is not None and self._stored_evaluation[0] is report:
            return self._stored_evaluation[1]
        return _as_stored(report)

    @model_serializer(mode="wrap")
    def _without_empty_inputs(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        if not self.inputs:
            dumped.pop("inputs", None)
        return dumped

    def tags(self) -> dict[str, str]:
        """The scalar fields, as strings (what a registry can filter on), and the inputs'
        licences and sources (`data.licences`, `data.sources`: comma-separated, `none` for an
        input without a licence)."""
        scalars = self.model_dump(mode="json", exclude_none=True)
        tags = {k: str(v) for k, v in scalars.items() if isinstance(v, str | int | float | bool)}
        if self.inputs:
            licences = {i.licence or "none" for i in self.inputs}
            sources = {i.datasheet.source for i in self.inputs if i.datasheet.source}
            tags["data.licences"] = ", ".join(sorted(licences))
            if sources:
                tags["data.sources"] = ", ".join(sorted(sources))
        return tags

    def same_job(self, other: Lineage) -> bool:
        """Whether both came from one training job (it is registered once)."""
        return self.training_job is not None and self.training_job == other.training_job


def _as_stored(report: EvalReport | None) -> dict[str, Any]:
    """How this release stores a report in a version record (`{}`: none)."""
    return {} if report is None else report.model_dump(mode="json", exclude=_NOT_KEPT)


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True)

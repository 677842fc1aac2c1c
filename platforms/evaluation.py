"""The evaluation report a registered version keeps: every number the gate compared, its checks
and its verdict.

The evaluate stage makes it (tasks/evaluate.py, the gate's decision from tasks/gate.py) and the
registry keeps it in a version's lineage (platforms/lineage.py), so the model lives here, below
both; tasks/evaluation_report.py renders it for a person.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from serving.runtimes import ServingChoice


class Check(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    value: float
    required: float
    passed: bool


Verdict = Literal["passed", "failed", "cannot-judge"]


class GateDecision(BaseModel):
    model_config = ConfigDict(frozen=True)
    passed: bool
    reasons: list[str]
    checks: list[Check]
    verdict: Verdict  # cannot-judge: too little evidence for either (never passed)

    @model_validator(mode="before")
    @classmethod
    def _verdict_of_older_reports(cls, data: object) -> object:
        """A report kept before verdicts: its `passed` says which."""
        if isinstance(data, dict) and "verdict" not in data:
            return {**data, "verdict": "passed" if data.get("passed") else "failed"}
        return data

    @property
    def word(self) -> str:
        """How a person reads the verdict: passed, FAILED, or cannot judge."""
        return {"passed": "passed", "failed": "FAILED", "cannot-judge": "cannot judge"}[
            self.verdict
        ]


Origin = Literal["training", "surrogate", "invented"]


class PiiFinding(BaseModel):
    """One value the screen's detectors found in a candidate's prediction that its input did not
    hold, where it came from, and the prediction around it as a reviewer sees it."""

    model_config = ConfigDict(frozen=True)
    record_id: str = Field(description="The test record's id.")
    entity: str = Field(description="What the detectors read it as, e.g. PERSON.")
    origin: Origin = Field(
        description="training: the training split holds it (memorised, fails the gate); "
        "surrogate: the training split holds it and the screen's rule for its kind plants "
        "surrogates (a fake the screen wrote, not a leak); invented: neither input nor training "
        "holds it (counted in the invented rate)."
    )
    context: str = Field(
        description="The prediction around it, every finding replaced by its placeholder."
    )


class OutputPii(BaseModel):
    """Personal data in the candidate's predictions by where it came from (values copied from a
    prediction's own input are not findings)."""

    model_config = ConfigDict(frozen=True)
    predictions: int = Field(description="How many predictions were screened.")
    memorised: int = Field(description="Predictions holding a value of the training split.")
    invented: int = Field(
        description="Predictions holding a value neither input nor training held."
    )
    findings: list[PiiFinding] = Field(default_factory=list)

    @property
    def invented_rate(self) -> float:
        """The share of predictions holding an invented value."""
        return self.invented / self.predictions if self.predictions else 0.0


class EvalReport(BaseModel):
    """Every number the gate compared, and its decision."""

    model_config = ConfigDict(frozen=True)
    task: str
    primary_metric: str
    test_records: int
    base: dict[str, float]
    candidate: dict[str, float]
    champion: dict[str, float] | None
    champion_version: int | None
    interval: tuple[float, float] | None
    pii_leaks: int  # predictions holding personal data not in their input (memorised or invented)
    gate: GateDecision
    output_pii: OutputPii | None = Field(
        None,
        description="Personal data in the candidate's predictions by origin, each finding in "
        "context (None: a report kept before origins were told apart).",
    )
    loss_curve: list[dict[str, float]] = Field(default_factory=list)
    samples: list[dict[str, Any]] = Field(
        default_factory=list,
        description="A few test requests with the candidate's offline answer: the rollout's "
        "smoke test checks the served model gives the same.",
    )
    serving: ServingChoice | None = Field(
        None,
        description="The runtime the endpoint serves (serving.runtime): each runtime's primary "
        "metric on the test split, the chosen one, why others were refused, the exported "
        "folder and the chosen runtime's hash. None: not checked (torch serves).",
    )
    examples: list[dict[str, str]] = Field(
        default_factory=list,
        description="A few test records' reference beside the base model's and the candidate's "
        "output (personal data found in the candidate's replaced by placeholders), for a person "
        "to read.",
    )

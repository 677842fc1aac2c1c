"""The drift signals: how each is measured and its threshold (`monitor.signals` in config), and
the typed result of one window against its reference.

Three kinds: input (what users send), output (what the model answers) and data quality
(personal data, other languages, malformed requests, failed answers). tasks/drift.py measures
them; tasks/drift_report.py writes what a person reads.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["input", "output", "quality"]
# Evidently's methods this config offers: p-values drift below the threshold, distances and
# domain classifiers' ROC AUC at or above it.
Method = Literal["wasserstein", "psi", "jensenshannon", "ks", "text", "embedding", "rate"]
P_VALUE_METHODS = frozenset({"ks"})


class SignalThreshold(BaseModel):
    """How one signal is measured and when it counts as drift."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    enabled: bool = Field(True, description="Measure this signal.")
    threshold: float = Field(
        description="Drift at or above this value (a distance, a domain classifier's ROC AUC, or "
        "the rise of a rate over the reference's); for the `ks` method, drift below this "
        "p-value."
    )
    method: Method = Field(description="How it is measured (Evidently's drift method, or rate).")


def _signal(threshold: float, method: Method, description: str) -> Any:
    return Field(
        default_factory=lambda: SignalThreshold(threshold=threshold, method=method),
        description=description,
    )


class DriftSignals(BaseModel):
    """Every signal the monitor measures, with its threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input_length: SignalThreshold = _signal(
        0.3, "wasserstein", "Request length in words (normed Wasserstein distance)."
    )
    vocabulary: SignalThreshold = _signal(
        0.75, "text", "Request words (ROC AUC of a classifier telling window from reference)."
    )
    out_of_vocabulary: SignalThreshold = _signal(
        0.1, "rate", "Share of request words never seen in training: its rise."
    )
    embedding: SignalThreshold = _signal(
        0.75, "embedding", "Sentence embeddings of requests (domain classifier's ROC AUC)."
    )
    answer_length: SignalThreshold = _signal(
        0.3, "wasserstein", "Answer length in words, against the test split's references."
    )
    empty_answers: SignalThreshold = _signal(0.1, "rate", "Share of empty answers: its rise.")
    score: SignalThreshold = _signal(
        0.3, "wasserstein", "Answer scores, against the version's traffic before the window."
    )
    personal_data: SignalThreshold = _signal(
        0.05, "rate", "Share of requests with personal data or credentials masked: its rise."
    )
    not_english: SignalThreshold = _signal(
        0.1, "rate", "Share of requests not in English: its rise."
    )
    malformed_requests: SignalThreshold = _signal(
        0.05, "rate", "Share of requests refused as malformed (4xx)."
    )
    failed_answers: SignalThreshold = _signal(
        0.05, "rate", "Share of requests the model failed to answer (5xx)."
    )


KINDS: dict[str, Kind] = {
    "input_length": "input",
    "vocabulary": "input",
    "out_of_vocabulary": "input",
    "embedding": "input",
    "answer_length": "output",
    "empty_answers": "output",
    "score": "output",
    "personal_data": "quality",
    "not_english": "quality",
    "malformed_requests": "quality",
    "failed_answers": "quality",
}


class SignalResult(BaseModel):
    """One signal of one window: what was measured against what, and whether it drifted."""

    model_config = ConfigDict(frozen=True)
    name: str
    kind: Kind
    method: Method
    value: float | None = Field(description="The measured value; None when it was not measured.")
    threshold: float
    drift: bool
    chance: float | None = Field(
        None,
        description="For a domain classifier's ROC AUC or a distance: what chance gives at the "
        "window's size (monitor.chance); drift needs a value above it too.",
    )
    current: float | None = Field(None, description="For a rate: the window's rate.")
    reference: float | None = Field(None, description="For a rate: the reference's rate.")
    note: str | None = Field(None, description="Why it was not measured, or what it compared.")


class DriftResult(BaseModel):
    """One window of a served model's traffic against its reference."""

    model_config = ConfigDict(frozen=True)
    model: str
    version: int | None = Field(description="The version whose traffic was read (the champion).")
    since: str | None
    until: str
    requests: int = Field(description="Requests the version answered or refused in the window.")
    reference_records: int
    judged: bool = Field(description="False when the window held too few requests to judge.")
    drift: bool
    drifted: list[str] = Field(default_factory=list, description="Names of the drifted signals.")
    signals: list[SignalResult] = Field(default_factory=list)
    reason: str = Field(description="One line: what was found, or why nothing was judged.")
    source: str = Field("local", description="Where the traffic was read (monitor.source).")
    read: dict[str, int] = Field(
        default_factory=dict,
        description="What reading the collected lines found (monitor.source azureml): files, "
        "lines, requests, malformed lines and the rest (tasks/monitor_azure.py).",
    )

    def signal(self, name: str) -> SignalResult | None:
        return next((s for s in self.signals if s.name == name), None)

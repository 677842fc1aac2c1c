"""The serving runtime: export the candidate, score each optimized runtime like the torch
candidate on the same test records, and choose the fastest within the allowed quality loss.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from serving import runtimes
from tasks.scoring import Scored, scored

log = logging.getLogger(__name__)


class ServingConfig(BaseModel):
    """What the endpoint runs the model with."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    runtime: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        "auto",
        description="auto: the fastest runtime within max_quality_loss of the torch candidate "
        "(onnx-int8, then onnx, then torch); or one runtime, which must pass the same check.",
    )
    max_quality_loss: float = Field(
        1.0,
        ge=0,
        description="Points of the primary metric an optimized runtime may lose against the "
        "torch candidate on the test split.",
    )
    gpu: bool = Field(
        False,
        description="The endpoint runs on GPUs: onnx-int8 is not a candidate (its int8 arithmetic "
        "is ONNX Runtime's CPU kernel, so asking for it is a config error). Set by the run when "
        "rollout.backend is azureml and azureml.endpoint.instance_type is a GPU size.",
    )

    @property
    def candidates(self) -> tuple[runtimes.Runtime, ...]:
        """The runtimes the endpoint may serve with, fastest first."""
        return runtimes.GPU_CANDIDATES if self.gpu else runtimes.FASTEST_FIRST


def choose_runtime(
    task_type: str,
    model_dir: Path,
    export_dir: Path,
    records: list[dict[str, Any]],
    candidate: Scored,
    serving: ServingConfig,
    primary: str,
    batch_size: int,
) -> tuple[list[str], runtimes.ServingChoice]:
    """Export the candidate into `export_dir`, score each optimized runtime like the torch
    candidate, choose the one to serve: (its predictions of `records`, the choice)."""
    from trainer.modeling import load_tokenizer_and_info
    from trainer.predict import predict

    scores = {"torch": candidate.metrics[primary]}
    made = {"torch": candidate.predictions}
    not_exported = []
    if serving.runtime != "torch":
        from serving.onnx_generation import NotExportable

        try:
            folders = runtimes.export(model_dir, export_dir / runtimes.FOLDER)
        except NotExportable as exc:
            folders, not_exported = {}, [f"not exported: {exc}"]
        for runtime, folder in folders.items():
            if serving.runtime not in ("auto", runtime) or runtime not in serving.candidates:
                continue
            tokenizer, info = load_tokenizer_and_info(model_dir)
            model = runtimes.load(folder)  # an ONNX model answers row by row
            made[runtime] = predict(model, tokenizer, info["task"], records, batch_size=batch_size)
            scores[runtime] = scored(task_type, made[runtime], records).metrics[primary]
    choice = runtimes.choose(scores, serving.runtime, serving.max_quality_loss, serving.candidates)
    gpu = [
        "onnx-int8: not a candidate on GPU instances (its int8 arithmetic is ONNX Runtime's CPU "
        "kernel)"
    ]
    choice = dataclasses.replace(
        choice,
        reasons=[*not_exported, *(gpu if serving.gpu else []), *choice.reasons],
        primary_metric=primary,
        folder=str(export_dir),
    )
    if choice.exported is not None:
        choice = dataclasses.replace(choice, sha256=runtimes.sha256_path(choice.exported))
    log.info("serving runtime %s: %s", choice.runtime, "; ".join(choice.reasons))
    return made[choice.runtime], choice

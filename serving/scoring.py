"""Scoring of a trained model directory: Azure ML's `init()` / `run()` contract and a `Scorer`.

On Azure ML this file is the deployment's scoring script: `init()` loads the model directory from
`AZUREML_MODEL_DIR` once per worker, `run(raw_json)` answers each request (a request it cannot
read gets a 400 naming the field, through the inference server's `AMLResponse`). The local server
uses the same `Scorer`, through a micro-batcher that hands `score()` several records at once.
On a GPU the model is placed there in `TUNEGATE_DTYPE` (auto: bfloat16 where the GPU has it
natively, else float16: `trainer.precision`), spread over the instance's GPUs when it has several
or in 4 bits (`TUNEGATE_DEVICE_MAP`, `TUNEGATE_LOAD_IN_4BIT`: trainer/spread.py); on a CPU it scores in float32 (`trainer.modeling.placement`, which the evaluation job
places its models by too).

Given a masker (the deployment's `score.py` names the screen's, `screening.outputs`), `init()`
collects every request and its answer, masked off the request path, into Azure ML's data
collector (`serving.collect.AzureMLSink`: the deployment's `model_inputs` / `model_outputs`)
when `azureml-ai-monitoring` imports and `TUNEGATE_COLLECT` is not 0. The deployment's `score.py`
takes the request's headers too (`routed_by`; Azure ML's inference server passes them to a
`run` with a `request_headers` parameter), so that a request naming its
deployment in the `azureml-model-deployment` header (a rollout's smoke and replayed requests) is
collected as `routed: named`, apart from the users' requests the endpoint's traffic weights
sent (`routed: traffic`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from serving import runtimes
from serving.api import DEPLOYMENT_HEADER
from serving.collect import (
    AZUREML_SINK,
    VERSION_ENV,
    AzureMLSink,
    Collection,
    Exchange,
    ms_since,
)
from serving.payloads import parse_json, parse_payload, record_size, record_tokens
from trainer.modeling import (
    DTYPES,
    MODEL_INFO,
    find_model_dir,
    load_tokenizer_and_info,
    load_trained,
    place,
    placement,
)
from trainer.predict import model_lengths
from trainer.spread import Spread
from trainer.taskspec import task_spec

__all__ = ["DTYPES", "Scorer", "init", "load_served", "placement", "run"]
log = logging.getLogger(__name__)


def load_served(
    model_dir: Path,
    threads: int = 0,
    runtime: str = "served",
    dtype: torch.dtype | None = None,
    spread: dict[str, Any] | None = None,
) -> tuple[Any, Any, dict[str, Any], runtimes.Runtime]:
    """(model, tokenizer, model_info, runtime) of a model folder as it serves: the runtime its
    `serving.json` names (files hash-checked), from the exported graphs and the tokenizer alone,
    the torch weights never loaded; torch when it names none or `runtime` is "torch" (its
    weights loaded in `dtype`, None: float32, and onto the GPUs `spread` maps them to:
    trainer/spread.py)."""
    served, exported = runtimes.served_runtime(model_dir)
    if exported is None or runtime == "torch":
        model, tokenizer, info = load_trained(model_dir, dtype=dtype, spread=spread)
        return model, tokenizer, info, "torch"
    tokenizer, info = load_tokenizer_and_info(model_dir)
    return runtimes.load(exported, threads), tokenizer, info, served


class Scorer:
    """A loaded model directory that answers records of its task."""

    def __init__(self, model_dir: str | Path) -> None:
        self.model_dir = find_model_dir(Path(model_dir))
        # trainer.modeling.placement: the evaluation job placed the models it judged the same way
        device, dtype = placement(os.environ.get("TUNEGATE_DTYPE", "auto"))
        # over the instance's GPUs, or in 4 bits (TUNEGATE_DEVICE_MAP, TUNEGATE_LOAD_IN_4BIT)
        on_gpus = Spread.from_env().load_kwargs(device, dtype, torch.cuda.device_count())
        # the runtime the evaluation chose and the registry recorded (serving.json), hash checked
        try:
            self.model, self.tokenizer, info, self.runtime = load_served(
                self.model_dir,
                threads=torch.get_num_threads(),
                dtype=None if device == "cpu" else dtype,  # no float32 copy of a 7B model first
                spread=on_gpus,
            )
        except KeyError as exc:  # model_info.json without a task, or a task with no model class
            raise ValueError(
                f"{self.model_dir / MODEL_INFO} names no servable task ({exc}): "
                "write it with trainer.modeling.write_model_info"
            ) from None
        self.task: str = info["task"]
        self.spec = task_spec(self.task)
        if self.runtime != "torch":
            return
        place(self.model, device, dtype)

    def parse(self, payload: Any) -> tuple[list[dict[str, Any]], bool]:
        """(records, is_batch) of a decoded request; ValueError names a missing or wrong field."""
        return parse_payload(self.task, payload)

    def size(self, record: dict[str, Any]) -> int:
        """How long `record` is (characters): the batcher batches requests of similar size."""
        return record_size(self.task, record)

    def tokens(self, records: Sequence[dict[str, Any]]) -> list[int]:
        """How many tokens of each record the model reads (what a request's limits count)."""
        return record_tokens(self.tokenizer, self.task, records)

    def close(self) -> None:
        """Nothing to stop: the model lives in this process (see `serving.workers` for others)."""

    @torch.inference_mode()  # grad mode is per thread: this runs in the batcher's worker thread
    def score(self, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """One response object per validated record, in order (a single model call)."""
        if not records:
            return []
        # what evaluation read: the model's trained lengths, the same QA window stride
        sizes = model_lengths(self.model, self.tokenizer)
        return self.spec.code.respond(
            self.model, self.tokenizer, records, self.spec.response_key, sizes
        )

    def run(self, raw_json: str | bytes) -> dict[str, Any]:
        """The response to one raw request: an object, or `{"outputs": [...]}` for a batch."""
        records, is_batch = self.parse(parse_json(raw_json))
        outputs = self.score(records)
        return {"outputs": outputs} if is_batch else outputs[0]


_scorer: Scorer | None = None
_collection: Collection | None = None


def init(masker: str | None = None) -> None:
    """Azure ML entry point: load the model named by `AZUREML_MODEL_DIR` once per worker; with a
    masker, collect the traffic (see the module's docstring)."""
    global _scorer, _collection
    model_dir = os.environ.get("AZUREML_MODEL_DIR")
    if not model_dir:
        raise ValueError("AZUREML_MODEL_DIR is not set: set it to a trained model directory")
    _scorer = Scorer(model_dir)
    if _collection is not None:  # initialised again: the previous writer finishes and exits
        _collection.close()
    _collection = None
    if masker is None or os.environ.get("TUNEGATE_COLLECT", "1") == "0":
        return
    if not AzureMLSink.available():
        log.warning("azureml-ai-monitoring is not installed: requests are not collected")
        return
    _collection = Collection(masker, [AZUREML_SINK])


def routed_by(headers: Mapping[str, str]) -> str:
    """How a request reached this deployment, from its HTTP headers: named when it named the
    deployment (`azureml-model-deployment`: a rollout's smoke and replayed requests), else
    traffic (the endpoint's weights chose it)."""
    named = any(k.lower() == DEPLOYMENT_HEADER and v for k, v in headers.items())
    return "named" if named else "traffic"


def run(raw_json: str | bytes, routed: str = "traffic") -> Any:
    """Azure ML entry point: the response to one request (see `serving.payloads` for shapes);
    `routed`: how it reached this deployment, as collected (`serving.collect.Exchange`).

    A request that is not JSON or lacks a field is the client's error: under Azure ML's inference
    server it gets a 400 with the reason (the server would answer any exception with a 500);
    elsewhere the ValueError is raised to the caller."""
    if _scorer is None:
        raise RuntimeError("scoring.run() called before scoring.init(): call init() first")
    started = time.perf_counter()
    records: list[dict[str, Any]] = []
    try:
        records, is_batch = _scorer.parse(parse_json(raw_json))
        outputs = _scorer.score(records)
    except ValueError as exc:
        _collect(started, routed, 400, [], None, str(exc))
        try:
            from azureml_inference_server_http.api.aml_response import AMLResponse
        except ImportError:
            raise exc from None
        return AMLResponse({"error": str(exc)}, 400, json_str=True)
    except Exception as exc:
        _collect(started, routed, 500, records, None, f"{type(exc).__name__}: {exc}")
        raise
    _collect(started, routed, 200, records, outputs)
    return {"outputs": outputs} if is_batch else outputs[0]


def _collect(
    started: float,
    routed: str,
    status: int,
    records: list[dict[str, Any]],
    outputs: list[Any] | None,
    error: str | None = None,
) -> None:
    if _collection is not None:  # queued: masked and sent off the request path
        deployment = os.environ.get("AZUREML_DEPLOYMENT_NAME")  # not set off Azure ML
        version = os.environ.get(VERSION_ENV) or None  # set by the deployment (tunegate's)
        _collection.submit(
            Exchange(
                deployment,
                version,
                status,
                ms_since(started),
                records,
                outputs,
                error,
                routed=routed,
            )
        )

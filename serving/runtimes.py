"""Serving runtimes: the trained model in PyTorch, or exported to ONNX and run by ONNX Runtime,
in fp32 or with its weights quantized to int8.

The fp32 torch forward pass is compute-bound on a CPU: batching adds parallelism but not speed.
ONNX Runtime runs the same graph faster, and dynamic int8 quantization faster still, at a cost
in quality that must be measured. So each optimized runtime is scored on the same test split by
the same metric code as the torch candidate (tasks/evaluate.py), and the fastest one within
`serving.max_quality_loss` of it is what the registry records and the endpoint serves
(`serving.json` beside the model); a runtime that loses more is refused and the next is tried.

Extractive QA (span) models are exported; the generative ones (encoder-decoder, decoder) serve
in torch for now (their export needs the decoding loop outside the graph).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from trainer.taskspec import task_spec

Runtime = Literal["torch", "onnx", "onnx-int8"]
FASTEST_FIRST: tuple[Runtime, ...] = ("onnx-int8", "onnx", "torch")
# On a GPU: ONNX Runtime's dynamic int8 operators (DynamicQuantizeLinear, MatMulInteger) run on
# its CPU provider, so an int8 graph would leave the GPU idle; fp32 ONNX runs on CUDA.
GPU_CANDIDATES: tuple[Runtime, ...] = ("onnx", "torch")
SERVING_FILE = "serving.json"  # in a registered model folder: the runtime it serves with
FOLDER = "serving"  # the exported files, beside the model
FILES: dict[str, str] = {"onnx": "model.onnx", "onnx-int8": "model.int8.onnx"}
INPUTS = ("input_ids", "attention_mask", "token_type_ids")  # a BERT forward's order
OPSET = 17


def exportable(task: str) -> bool:
    """Whether the task's models are exported (span models; generative ones serve in torch)."""
    return task_spec(task).kind == "span"


def export(model_dir: Path, out_dir: Path) -> dict[str, Path]:
    """ONNX files of a trained span model (a LoRA adapter merged first), fp32 and dynamic int8,
    with dynamic batch and sequence axes: {runtime: file}."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from trainer.modeling import load_trained

    model, tokenizer, _ = load_trained(model_dir)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    sample = tokenizer(["a question"], ["a context of a few words"], return_tensors="pt")
    names = [n for n in INPUTS if n in sample]
    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "start_logits", "end_logits"]}
    fp32 = out_dir / FILES["onnx"]
    with torch.no_grad():
        torch.onnx.export(
            model,
            (),
            str(fp32),
            kwargs={n: sample[n] for n in names},
            input_names=names,
            output_names=["start_logits", "end_logits"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    int8 = out_dir / FILES["onnx-int8"]
    # weights scaled per output channel: on the demo model, test F1 80.3 against torch's 80.7
    # (per tensor: 77.5) at the same speed
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    return {"onnx": fp32, "onnx-int8": int8}


def providers() -> list[str]:
    """ONNX Runtime's execution providers to run on: CUDA first where onnxruntime-gpu finds a GPU
    (the tunegate-serving-gpu environment), the CPU always."""
    import onnxruntime as ort

    cuda = "CUDAExecutionProvider" in ort.get_available_providers()
    return ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]


class OnnxSpanModel:
    """An ONNX Runtime session that answers like a span model's forward pass (`model(**batch)`
    with start and end logits), so trainer.predict decodes its answers unchanged.

    Each window of a batch is its own session call, without its padding: dynamic int8
    quantization scales a call's activations by their largest value, so in one call of a whole
    padded batch a window's answer would depend on the other windows and on the padding (measured
    on the demo model: test F1 80.3 one window at a time, 78.1 in batches of 16, 77.6 of 32). Window
    by window, a request is answered the same alone, in any batch, offline and served, and no time
    goes to padding. Positions past a window's end get the lowest logit."""

    def __init__(self, path: Path, threads: int = 0) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=providers())
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.path = path

    def eval(self) -> OnnxSpanModel:
        return self

    def __call__(self, **batch: Any) -> SimpleNamespace:
        import numpy as np
        import torch

        arrays = {name: batch[name].numpy() for name in self.inputs}
        mask = batch["attention_mask"].numpy().astype(bool)
        starts = np.full(mask.shape, np.finfo(np.float32).min, dtype=np.float32)
        ends = starts.copy()
        for row, kept in enumerate(mask):
            at = np.flatnonzero(kept)  # the window's tokens: padding on either side left out
            if at.size == 0:
                continue
            span = slice(int(at[0]), int(at[-1]) + 1)
            feed = {name: array[row : row + 1, span] for name, array in arrays.items()}
            start, end = self.session.run(["start_logits", "end_logits"], feed)
            starts[row, span], ends[row, span] = start[0], end[0]
        return SimpleNamespace(
            start_logits=torch.from_numpy(starts), end_logits=torch.from_numpy(ends)
        )


@dataclass(frozen=True)
class RuntimeChoice:
    """Which runtime serves, and every runtime's primary metric and why it was (not) chosen."""

    runtime: Runtime
    scores: dict[str, float]  # runtime -> primary metric on the test split
    reasons: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "scores": self.scores, "reasons": self.reasons}


def choose(
    scores: dict[str, float],
    wanted_runtime: str,
    max_quality_loss: float,
    candidates: Sequence[Runtime] = FASTEST_FIRST,
) -> RuntimeChoice:
    """The first of `candidates` (fastest first; only `wanted_runtime` unless it is auto) that
    was scored and loses at most `max_quality_loss` points against torch; torch otherwise."""
    wanted = [r for r in candidates if wanted_runtime in ("auto", r)]
    reasons = []
    for runtime in wanted:
        if runtime == "torch" or runtime not in scores:
            continue
        loss = scores["torch"] - scores[runtime]
        if loss <= max_quality_loss:
            reasons.append(f"{runtime}: {-loss:+.2f} points against torch, within the limit")
            return RuntimeChoice(runtime, scores, reasons)
        reasons.append(
            f"{runtime} refused: loses {loss:.2f} points against torch "
            f"(serving.max_quality_loss {max_quality_loss})"
        )
    return RuntimeChoice("torch", scores, [*reasons, "torch serves"])


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_serving_file(model_dir: Path, choice: RuntimeChoice) -> dict[str, Any]:
    """`serving.json` in a model folder about to be registered: the runtime, its file and the
    file's hash (what the lineage records); returns what it wrote."""
    record: dict[str, Any] = choice.as_dict()
    if choice.runtime != "torch":
        file = Path(FOLDER) / FILES[choice.runtime]
        record |= {"file": str(file), "sha256": sha256_file(model_dir / file)}
    (model_dir / SERVING_FILE).write_text(json.dumps(record, indent=2))
    return record


def served_runtime(model_dir: Path) -> Runtime:
    """The runtime a registered model folder serves with (torch when it records none); an
    optimized file whose hash differs from the record is refused."""
    path = model_dir / SERVING_FILE
    if not path.is_file():
        return "torch"
    record = json.loads(path.read_text())
    runtime = record["runtime"]
    if runtime != "torch" and sha256_file(model_dir / record["file"]) != record["sha256"]:
        raise ValueError(
            f"{model_dir / record['file']} does not match the hash in {path}: the registered "
            "serving file was changed; register the model again"
        )
    return runtime

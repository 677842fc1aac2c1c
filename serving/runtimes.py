"""Serving runtimes: the trained model in PyTorch, or exported to ONNX and run by ONNX Runtime,
in fp32 or with its weights quantized to int8.

The fp32 torch forward pass is compute-bound on a CPU: batching adds parallelism but not speed.
ONNX Runtime runs the same graph faster, and with 8-bit weights and int8 arithmetic faster still,
at a cost in quality that must be measured. So each optimized runtime is scored on the same test split by
the same metric code as the torch candidate (tasks/evaluate.py), and the fastest one within
`serving.max_quality_loss` of it is what the registry records and the endpoint serves
(`serving.json` beside the model); a runtime that loses more is refused and the next is tried.

Extractive QA (span) models are exported as one graph; the packaged generative models (BERT
encoder-decoder and decoder) as the graphs of a decoding step with a key/value cache, decoded
greedily outside them (serving/onnx_generation.py); other architectures, and the text kind
(evaluated by its token probabilities), serve in torch. Which exporter a task uses is its kind
module's `EXPORTER`, a key of `EXPORTERS`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from trainer.taskspec import task_spec

Runtime = Literal["torch", "onnx", "onnx-int8"]
FASTEST_FIRST: tuple[Runtime, ...] = ("onnx-int8", "onnx", "torch")
# On a GPU: the int8 graph is made and measured for the CPU (its int8 arithmetic, MatMulNBits'
# accuracy level 4, is ONNX Runtime's CPU kernel; it was never measured on CUDA); fp32 ONNX runs
# on CUDA.
GPU_CANDIDATES: tuple[Runtime, ...] = ("onnx", "torch")
SERVING_FILE = "serving.json"  # in a registered model folder: the runtime it serves with
FOLDER = "serving"  # the exported runtimes, beside the model: serving/<runtime>/
SPAN_GRAPH = "model.onnx"  # a span model's graph; generative ones: serving/onnx_generation.py
INPUTS = ("input_ids", "attention_mask", "token_type_ids")  # a BERT forward's order
OPSET = 17


def export(model_dir: Path, out_dir: Path) -> dict[Runtime, Path]:
    """A trained model (a LoRA adapter merged first) exported to ONNX, in fp32 and with its
    weights quantized to 8 bits and int8 arithmetic (`_quantize`): {runtime: its folder under `out_dir`}, by the
    exporter its task's kind names (`EXPORTERS`)."""
    from trainer.model_paths import has_weights
    from trainer.modeling import MODEL_INFO, load_trained

    info = json.loads((model_dir / MODEL_INFO).read_text())
    exporter = exporter_of(info["task"])
    exporter.check(info["base_model"])  # before loading weights that may be many GB
    if not has_weights(model_dir):
        from serving.onnx_generation import NotExportable

        raise NotExportable(
            f"{model_dir} holds no weights here (an Azure ML training job's weights stay in its "
            "output): it serves in torch"
        )
    model, tokenizer, info = load_trained(model_dir)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.eval()
    fp32 = out_dir / "onnx"
    if fp32.exists():
        shutil.rmtree(fp32)
    graphs = exporter.export(model, tokenizer, fp32)
    int8 = out_dir / "onnx-int8"
    if int8.exists():
        shutil.rmtree(int8)
    shutil.copytree(fp32, int8, ignore=shutil.ignore_patterns("*.onnx"))
    for graph in graphs:
        _quantize(graph, int8 / graph.name)
    return {"onnx": fp32, "onnx-int8": int8}


@dataclass(frozen=True)
class Exporter:
    """How a kind of model is exported: `check(base_model)` raises NotExportable (the model
    serves in torch) before any weights load; `export(model, tokenizer, folder)` writes the
    graphs into `folder` and returns their paths."""

    check: Callable[[str], None]
    export: Callable[[Any, Any, Path], list[Path]]


def _any_base(base_model: str) -> None:
    """Every span model exports (one BERT-style forward pass)."""


def _never(base_model: str) -> None:
    """A kind that serves in torch only (its kind module says why)."""
    from serving.onnx_generation import NotExportable

    raise NotExportable(f"{base_model}: this task's models are not exported; it serves in torch")


def _never_export(model: Any, tokenizer: Any, folder: Path) -> list[Path]:
    raise AssertionError("_never refuses every model before it loads")


def _span_export(model: Any, tokenizer: Any, folder: Path) -> list[Path]:
    return [_export_span(model, tokenizer, folder / SPAN_GRAPH)]


def _generative_check(base_model: str) -> None:
    from serving.onnx_generation import check_exportable

    check_exportable(base_model)


def _generative_export(model: Any, tokenizer: Any, folder: Path) -> list[Path]:
    from serving.onnx_generation import export as export_generative

    return export_generative(model, tokenizer, folder, OPSET)


# Keyed by a kind module's EXPORTER (trainer/kinds/): span models are one graph; the packaged
# generative ones the graphs of a decoding step (serving/onnx_generation.py, which raises
# NotExportable for architectures it has no exporter for); "none" exports nothing (the text kind:
# its evaluation reads token probabilities, which an exported decoding step does not give).
EXPORTERS: dict[str, Exporter] = {
    "span": Exporter(_any_base, _span_export),
    "generative": Exporter(_generative_check, _generative_export),
    "none": Exporter(_never, _never_export),
}


def exporter_of(task: str) -> Exporter:
    """The exporter of a task's kind; ValueError naming an exporter the table lacks."""
    name = task_spec(task).code.EXPORTER
    if name not in EXPORTERS:
        raise ValueError(
            f"task {task!r} names exporter {name!r}, which serving/runtimes.py does not have: "
            f"expected one of {sorted(EXPORTERS)}"
        )
    return EXPORTERS[name]


def _export_span(model: Any, tokenizer: Any, path: Path) -> Path:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    sample = tokenizer(["a question"], ["a context of a few words"], return_tensors="pt")
    names = [n for n in INPUTS if n in sample]
    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "start_logits", "end_logits"]}
    with torch.no_grad():
        torch.onnx.export(
            model,
            (),
            str(path),
            kwargs={n: sample[n] for n in names},
            input_names=names,
            output_names=["start_logits", "end_logits"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    return path


# int8: every MatMul with a constant weight becomes ONNX Runtime's MatMulNBits with 8-bit weights
# in blocks of INT8_BLOCK inputs (a scale and zero point per block of each output channel) and,
# at accuracy level 4, int8 arithmetic on activations quantized per token and block
# (docs/endpoint.md, Runtimes). Dynamic quantization (MatMulInteger) scales a whole window's
# activations by one number, so a few outlier features of a LayerNorm's output or a GELU's cost
# every other feature its precision: on the demo model it changed 12% of the answers torch gives
# (530 records), MatMulNBits 3-4%, at 1.4x the fp32 graph's speed instead of 2.1x.
INT8_BITS = 8
INT8_BLOCK = 128  # 32 and 64: as faithful, slower
INT8_COMPUTE = 4  # MatMulNBits accuracy_level 4: int8 products, int32 sums


def _quantize(fp32: Path, int8: Path) -> None:
    import logging

    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    # it logs every node it leaves as it is
    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)
    quantizer = MatMulNBitsQuantizer(
        str(fp32),
        bits=INT8_BITS,
        block_size=INT8_BLOCK,
        accuracy_level=INT8_COMPUTE,
        op_types_to_quantize=("MatMul",),
    )
    quantizer.process()
    quantizer.model.save_model_to_file(str(int8), use_external_data_format=False)


def providers() -> list[str]:
    """ONNX Runtime's execution providers to run on: CUDA first where onnxruntime-gpu finds a GPU
    (the tunegate-serving-gpu environment), the CPU always."""
    import onnxruntime as ort

    cuda = "CUDAExecutionProvider" in ort.get_available_providers()
    return ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]


def session(path: Path, threads: int = 0) -> Any:
    """An ONNX Runtime session of one graph, with `threads` threads (0: ONNX Runtime's choice)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=providers())


def load(folder: Path, threads: int = 0) -> Any:
    """The exported runtime in `folder`, answering as its torch model does for trainer.predict:
    a span model's forward pass, or a generative model's `generate`."""
    if (folder / SPAN_GRAPH).exists():
        return OnnxSpanModel(folder / SPAN_GRAPH, threads)
    from serving.onnx_generation import OnnxGenerator

    return OnnxGenerator(folder, lambda path: session(path, threads))


class OnnxSpanModel:
    """An ONNX Runtime session that answers like a span model's forward pass (`model(**batch)`
    with start and end logits), so trainer.predict decodes its answers unchanged.

    Each window of a batch is its own session call, without its padding: no time goes to
    padding, and a window's answer never depends on what else shares its batch (with dynamic
    int8, which scaled a call's activations by their largest value, it did: on the demo model,
    test F1 80.3 one window at a time, 78.1 in batches of 16, 77.6 of 32). Window by window, a
    request is answered the same alone, in any batch, offline and served. Positions past a
    window's end get the lowest logit."""

    def __init__(self, path: Path, threads: int = 0) -> None:
        self.session = session(path, threads)
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
class ServingChoice:
    """Which runtime serves, every runtime's primary metric and why each was (not) chosen; from
    the evaluation, also the metric, the folder the candidate was exported to and the chosen
    runtime's hash there (what registration checks before it stages the files)."""

    runtime: Runtime
    scores: dict[str, float]  # runtime -> primary metric on the test split
    reasons: list[str]
    primary_metric: str | None = None
    folder: str | None = None  # the evaluation's export folder: serving/<runtime>/ under it
    sha256: str | None = None  # sha256_path of the chosen runtime's exported folder

    def as_dict(self) -> dict[str, Any]:
        """What `serving.json` records of the choice."""
        return {"runtime": self.runtime, "scores": self.scores, "reasons": self.reasons}

    @property
    def exported(self) -> Path | None:
        """The chosen runtime's exported folder (None: torch serves, nothing was exported)."""
        if self.runtime == "torch" or self.folder is None:
            return None
        return Path(self.folder) / FOLDER / self.runtime


def choose(
    scores: dict[str, float],
    wanted_runtime: str,
    max_quality_loss: float,
    candidates: Sequence[Runtime] = FASTEST_FIRST,
) -> ServingChoice:
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
            return ServingChoice(runtime, scores, reasons)
        reasons.append(
            f"{runtime} refused: loses {loss:.2f} points against torch "
            f"(serving.max_quality_loss {max_quality_loss})"
        )
    return ServingChoice("torch", scores, [*reasons, "torch serves"])


def sha256_path(path: Path) -> str:
    """The sha256 of a file, or of a folder's files (their names and contents, in name order)."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def stage(model_dir: Path, exported: Path, choice: ServingChoice, dest: Path) -> dict[str, Any]:
    """`dest`: a copy of `model_dir` serving with `choice`: the chosen runtime's exported folder
    (`exported`) at serving/<runtime>/ and `serving.json` naming it with its hash (what the
    lineage records), which it returns. A torch choice copies no exported files."""
    if dest.exists():
        shutil.rmtree(dest)
    # whatever serving files the model folder had are not the ones chosen
    shutil.copytree(model_dir, dest, ignore=shutil.ignore_patterns(FOLDER, SERVING_FILE))
    record: dict[str, Any] = choice.as_dict()
    if choice.runtime != "torch":
        folder = Path(FOLDER) / choice.runtime
        shutil.copytree(exported, dest / folder)
        record |= {"path": folder.as_posix(), "sha256": sha256_path(dest / folder)}
    (dest / SERVING_FILE).write_text(json.dumps(record, indent=2))
    return record


def served_runtime(model_dir: Path) -> tuple[Runtime, Path | None]:
    """The runtime a registered model folder serves with and its exported folder (torch and
    None when it records none); exported files whose hash differs from the record are refused."""
    path = model_dir / SERVING_FILE
    if not path.is_file():
        return "torch", None
    record = json.loads(path.read_text())
    runtime = record["runtime"]
    if runtime == "torch":
        return "torch", None
    exported = model_dir / record["path"]
    if sha256_path(exported) != record["sha256"]:
        raise ValueError(
            f"{exported} does not match the hash in {path}: the registered serving files were "
            "changed; register the model again"
        )
    return runtime, exported

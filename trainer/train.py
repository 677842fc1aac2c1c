"""Fine-tune a model on a split dataset (extractive QA, summarization, causal LM / chat SFT).

One process (CPU or one GPU):
    python -m trainer.train --data-dir DATA --output-dir OUT [--config ARGS.yaml]
Several processes on one machine (DDP; gloo on CPU, NCCL on GPUs):
    torchrun --nproc_per_node 2 -m trainer.train --data-dir DATA --output-dir OUT
With an accelerate config (DDP, FSDP or DeepSpeed ZeRO-1/2/3, see trainer/configs/):
    accelerate launch --config_file trainer/configs/deepspeed_zero3.yaml -m trainer.train ...
Multi-node on Azure ML (one launcher per node; Azure ML sets the rank and rendezvous variables):
    accelerate launch --config_file trainer/configs/ddp.yaml --num_machines $NODE_COUNT \
        --num_processes $TOTAL_GPUS --machine_rank $NODE_RANK --main_process_ip $MASTER_ADDR \
        --main_process_port $MASTER_PORT -m trainer.train ...
    (`process_count_per_instance: 1` in the job: accelerate starts the per-GPU processes.)

Writes to --output-dir: the LoRA adapter (or full weights), the tokenizer, `model_info.json`,
`metrics.json` (loss curve, eval loss, tokens/s, peak memory, steps) and the trainer state; with
--merge-adapter also `merged/`. Logs to MLflow when MLFLOW_TRACKING_URI is set: into the flow's
run when the training backend names one (trainer/tracking.py).

Every --save-steps optimizer steps a checkpoint goes to --checkpoint-dir (default
`OUTPUT/checkpoints`); started again with the same arguments (a preempted job's rerun), it resumes
from the newest complete one, skipping one cut short mid-save, and removes them once the model is
saved (trainer/checkpoints.py).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import logging
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
import torch.distributed as dist
from transformers import Trainer, TrainerCallback, TrainingArguments
from transformers.trainer_callback import PrinterCallback, ProgressCallback

from trainer import checkpoints, flops
from trainer.args import MIXED_PRECISION, TrainArgs, parse_args
from trainer.data import features, read_split
from trainer.modeling import (
    MERGED,
    base_config,
    load_base,
    load_tokenizer,
    lora_targets,
    without_token_types,
    write_model_info,
)
from trainer.precision import auto_precision, device_capability
from trainer.progress import OWN, ProgressWriter
from trainer.taskspec import task_spec
from trainer.tracking import attached_run, given_run

log = logging.getLogger("trainer.train")  # not __name__: that is __main__ under `python -m`


def main(argv: list[str] | None = None) -> dict[str, Any]:
    # args
    args = parse_args(argv)
    _log_to_stdout()
    output_dir = Path(args.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)

    # data
    tokenizer = load_tokenizer(args.model)  # with a pad token
    tokenizer.model_max_length = args.max_length  # saved with it: prediction cuts the same way
    code = task_spec(args.task).code  # the task kind's features, collator and tokenizer
    tokenizer = code.prepare_tokenizer(tokenizer)  # a decoder's chat template
    if args.lora:  # saved with it: prediction, merged weights and exports see the same inputs
        tokenizer = without_token_types(tokenizer, args.task)
    train_records = read_split(args.data_dir, "train", args.max_train_samples)
    if not train_records:
        raise SystemExit(f"{args.data_dir}/train has no records to train on")
    config = base_config(args.model)  # what the inputs depend on (t5's task prefix)
    train_set = features(args.task, tokenizer, train_records, args, config)
    eval_set = features(args.task, tokenizer, read_split(args.data_dir, "validation"), args, config)

    # distribution: before the model, so DeepSpeed ZeRO-3 (zero3_init_flag) partitions the
    # weights as they load instead of every rank loading the whole model
    training_args = _training_arguments(args, has_eval=len(eval_set) > 0)

    # model
    model = load_base(args.task, args.model, args.seed)
    _log_zero_partitioning(training_args, model)
    if args.lora:
        model = _with_lora(model, args)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

    # trainer: its curves go into the flow's MLflow run when the training backend names one
    try:
        with attached_run(dataclasses.asdict(args), training_args.process_index):
            return _train(args, training_args, model, tokenizer, code, train_set, eval_set)
    finally:
        _close_process_group()


def _close_process_group() -> None:
    """Close the distributed process group of a multi-process run (none in one process). A rank
    that exits with it open while another rank still writes the model can abort in gloo's
    teardown (`terminate called without an active exception`, seen on a 2-node CPU test run):
    `_train` ends with every rank waiting for the others, then each closes it here."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _train(
    args: TrainArgs,
    training_args: TrainingArguments,
    model: Any,
    tokenizer: Any,
    code: Any,
    train_set: Any,
    eval_set: Any,
) -> dict[str, Any]:
    output_dir, checkpoint_dir = Path(args.output_dir), checkpoint_folder(args)
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_set,
        eval_dataset=eval_set if len(eval_set) else None,
        data_collator=code.collator(tokenizer, model),
        processing_class=tokenizer,
    )
    # progress as `[progress] step=40/196 ...` lines (trainer/progress.py), not a dict per log
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    trainer.add_callback(ProgressLines())
    trainer.add_callback(MarkSaved())

    # train, from the newest complete checkpoint when a killed run left one
    resume = checkpoints.newest_complete(
        checkpoint_dir, remove_torn=trainer.is_world_process_zero()
    )
    if resume is not None:
        log.info("resuming from step %d (%s)", resume.step, resume.path)
    peak = flops.peak_flops(_precision(args))  # every rank at once, as they will train
    start = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=str(resume.path) if resume else None)
    seconds = time.perf_counter() - start
    eval_metrics = trainer.evaluate() if len(eval_set) else {}

    # save
    if trainer.is_fsdp_enabled:  # gather the shards so the adapter is written whole
        trainer.accelerator.state.fsdp_plugin.set_state_dict_type("FULL_STATE_DICT")
    trainer.save_model(str(output_dir))
    metrics: dict[str, Any] = {}
    if trainer.is_world_process_zero():
        trainer.state.save_to_json(str(output_dir / checkpoints.STATE))
        write_model_info(
            output_dir,
            args.task,
            args.model,
            adapter=args.lora,
            max_length=args.max_length,
            max_new_tokens=args.max_target_length if code.GENERATIVE else None,
        )
        if args.merge_adapter and args.lora:
            _save_merged(args, output_dir, tokenizer)
        resumed_from = resume.step if resume else 0
        metrics = _metrics(trainer, train_set, result, eval_metrics, seconds, args, resumed_from)
        metrics.update(_utilisation(trainer.model, train_set, metrics, seconds, peak))
        (output_dir / "metrics.json").write_text(json.dumps(metrics, indent=2))
        checkpoints.remove_all(checkpoint_dir)  # the model is saved: nothing to resume
    trainer.accelerator.wait_for_everyone()  # no rank leaves while rank 0 still writes
    return metrics


def checkpoint_folder(args: TrainArgs) -> Path:
    """Where checkpoints go: --checkpoint-dir, else `checkpoints/` in the output folder."""
    return Path(args.checkpoint_dir or Path(args.output_dir) / "checkpoints")


class MarkSaved(TrainerCallback):
    """After each checkpoint: wait for every process to have saved its part, then the main one
    marks the checkpoint complete (`checkpoints.mark_saved`)."""

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        processes = 1
        if dist.is_available() and dist.is_initialized():
            dist.barrier()
            processes = dist.get_world_size()
        if state.is_world_process_zero:
            checkpoints.mark_saved(Path(args.output_dir), state.global_step, processes)


class ProgressLines(TrainerCallback):
    """The Trainer's events as `[progress]` lines on stdout, the job's log (`ProgressWriter`),
    written by the main process only."""

    def __init__(self, every_seconds: float = 5.0) -> None:
        self.writer = ProgressWriter(every_seconds)

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.writer.began(state.global_step)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.is_world_process_zero:
            self.writer.stepped(state.global_step, state.max_steps, state.epoch or 0.0)

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        if state.is_world_process_zero:
            self.writer.logged(state.global_step, state.max_steps, state.epoch or 0.0, logs or {})

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.is_world_process_zero:
            self.writer.ended(state.global_step, state.max_steps, state.epoch or 0.0)


def _log_to_stdout() -> None:
    """The trainer's own log lines (e.g. which weights start new) go to stdout, the job's log,
    marked `[trainer] ` (trainer/progress.py): the orchestrator shows them, and keeps every
    other line of the job's log (a library's warnings) in the run's log file only."""
    logger = logging.getLogger("trainer")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter(OWN + "%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def _log_zero_partitioning(training_args: TrainingArguments, model: Any) -> None:
    """Under DeepSpeed, its ZeRO stage and how much of the model this rank holds: a model that
    ZeRO-3 partitioned as it loaded (zero3_init_flag) holds about 1/world size, never the whole."""
    plugin = getattr(training_args, "deepspeed_plugin", None)
    if plugin is None:
        return
    from transformers.integrations import is_deepspeed_zero3_enabled

    # a ZeRO-3 parameter is an empty placeholder; its rank's shard is `ds_tensor`
    held = sum(getattr(p, "ds_tensor", p).numel() for p in model.parameters())
    total = sum(getattr(p, "ds_numel", p.numel()) for p in model.parameters())
    log.info(
        "DeepSpeed ZeRO stage %s (partitioned at load: %s): this rank holds %d of the model's "
        "%d parameters",
        plugin.zero_stage,
        "yes" if is_deepspeed_zero3_enabled() else "no",
        held,
        total,
    )


def _save_merged(args: TrainArgs, output_dir: Path, tokenizer: Any) -> None:
    """The saved adapter applied to a fresh copy of the base model, merged, saved in `merged/`.

    From the files, not the trained model: under ZeRO-3 (or FSDP) this rank holds only a shard
    of it. The copy loads whole on this rank only, so not under ZeRO-3's partitioning at load,
    which every rank would have to join."""
    from peft import PeftModel
    from transformers.integrations.deepspeed import unset_hf_deepspeed_config

    unset_hf_deepspeed_config()  # training is over
    base = load_base(args.task, args.model, args.seed)
    merged = PeftModel.from_pretrained(base, output_dir).merge_and_unload()
    merged.save_pretrained(output_dir / MERGED)
    tokenizer.save_pretrained(output_dir / MERGED)


def _with_lora(model: Any, args: TrainArgs) -> Any:
    from peft import LoraConfig, TaskType, get_peft_model

    spec = task_spec(args.task)
    config = LoraConfig(
        task_type=TaskType[spec.peft_task_type],
        r=args.lora_r,
        lora_alpha=args.lora_alpha,
        lora_dropout=args.lora_dropout,
        target_modules=lora_targets(args.model, args.lora_target_modules),
        modules_to_save=list(spec.heads_to_save) or None,
    )
    return get_peft_model(model, config)


def _precision(args: TrainArgs) -> str:
    """The precision trained in: `auto` is bf16 where native, fp16 (with loss scaling) on older
    GPUs, fp32 on a CPU."""
    if args.precision == "auto":
        return auto_precision(device_capability())
    return args.precision


def _training_arguments(args: TrainArgs, has_eval: bool) -> TrainingArguments:
    precision = _precision(args)
    # The configured precision wins over the launcher's: `accelerate launch` exports its config's
    # mixed_precision (bf16 in trainer/configs/), which TrainingArguments (and DeepSpeed) would
    # take whenever bf16 and fp16 are both off, e.g. fp32 on a T4 or on CPU.
    os.environ["ACCELERATE_MIXED_PRECISION"] = MIXED_PRECISION[precision]
    training_args = TrainingArguments(
        output_dir=str(checkpoint_folder(args)),  # the Trainer's own writes: checkpoints only
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        learning_rate=args.learning_rate,
        weight_decay=args.weight_decay,
        warmup_steps=args.warmup_ratio,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.eval_batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        train_sampling_strategy="group_by_length" if args.group_by_length else "random",
        length_column_name="length",
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        use_cpu=not torch.cuda.is_available(),
        eval_strategy="epoch" if has_eval else "no",
        save_strategy="steps" if args.save_steps else "no",
        save_steps=args.save_steps or 500,  # unused with "no"; must be positive
        save_total_limit=args.save_total_limit,
        logging_steps=args.logging_steps,
        report_to=report_to(),
        seed=args.seed,
        dataloader_num_workers=args.num_workers,
        disable_tqdm=not sys.stderr.isatty(),
        ddp_find_unused_parameters=False,
    )
    # Every process says who it is: in a job's per-process logs, which ranks ran and how.
    backend = dist.get_backend() if dist.is_available() and dist.is_initialized() else "none"
    log.info(
        "process %d of %d (local %d) on %s, distributed backend %s, precision %s",
        training_args.process_index,
        training_args.world_size,
        training_args.local_process_index,
        training_args.device,
        backend,
        training_args.mixed_precision,
    )
    return training_args


def report_to() -> list[str] | str:
    """MLflow when a tracking URI is set (Azure ML jobs set one; a training backend hands its
    flow's run, trainer/tracking.py) and mlflow is installed."""
    if not os.environ.get("MLFLOW_TRACKING_URI") and given_run() is None:
        return "none"
    if importlib.util.find_spec("mlflow") is None:
        log.warning(
            "MLFLOW_TRACKING_URI is set but mlflow is not installed: not logging to MLflow; "
            "pip install mlflow azureml-mlflow"
        )
        return "none"
    return ["mlflow"]


def _utilisation(
    model: Any, train_set: Any, metrics: dict[str, Any], seconds: float, peak: flops.Peak | None
) -> dict[str, Any]:
    """Model FLOPs utilisation (`trainer.flops`) of the steps this run trained, logged."""
    share = metrics["tokens_per_second"] * seconds / max(1, sum(train_set["length"]))
    targets = None
    if "labels" in train_set.column_names and getattr(model.config, "is_encoder_decoder", False):
        targets = [sum(1 for t in labels if t >= 0) for labels in train_set["labels"]]
    done = flops.training_flops(model, train_set["length"], targets) * share
    mfu = flops.utilisation(done, seconds, peak, metrics["world_size"])
    achieved = done / seconds if seconds > 0 else 0.0
    if mfu is None:
        log.info("model FLOPs: %.3g a second (no peak known for this device)", achieved)
    else:
        assert peak is not None
        log.info(
            "model FLOPs utilisation %.1f%%: %.3g FLOPs a second of %s x %.3g (%s)",
            100 * mfu, achieved, metrics["world_size"], peak.flops, peak.source,
        )  # fmt: skip
    return {
        "model_flops_per_second": round(achieved, 1),
        "peak_flops_per_second": round(peak.flops, 1) if peak else None,
        "peak_flops_source": peak.source if peak else None,
        "mfu": round(mfu, 5) if mfu is not None else None,
    }


def _metrics(
    trainer: Trainer,
    train_set: Any,
    result: Any,
    eval_metrics: dict[str, float],
    seconds: float,
    args: TrainArgs,
    resumed_from: int,
) -> dict[str, Any]:
    epochs = trainer.state.epoch or args.epochs
    steps = trainer.state.global_step
    # a resumed run trained (and is timed) from its checkpoint's step on
    share = (steps - resumed_from) / steps if steps else 1.0
    tokens = sum(train_set["length"]) * epochs * share
    peak = (
        torch.cuda.max_memory_allocated()
        if torch.cuda.is_available()
        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    )
    return {
        "task": args.task,
        "base_model": args.model,
        "train_records": len(train_set),
        "train_loss": result.training_loss,
        "train_seconds": round(seconds, 2),
        "steps": steps,
        "resumed_from_step": resumed_from,
        "tokens_per_second": round(tokens / seconds, 1),
        "peak_memory_bytes": int(peak),
        "world_size": trainer.args.world_size,
        "eval": eval_metrics,
        "loss_curve": [
            {"step": h["step"], "loss": h["loss"]} for h in trainer.state.log_history if "loss" in h
        ],
        "trainable_parameters": sum(
            p.numel() for p in trainer.model.parameters() if p.requires_grad
        ),
    }


if __name__ == "__main__":
    main()

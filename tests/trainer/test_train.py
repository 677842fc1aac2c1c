"""The trainer program end to end on tiny models built from a config here (QA, seq2seq, causal)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from transformers import (
    AutoModelForQuestionAnswering,
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    T5Config,
    T5ForConditionalGeneration,
)

from tasks.records import TaskType
from trainer.args import PACKAGED_MODEL, parse_args
from trainer.modeling import load_tokenizer, load_trained
from trainer.taskspec import task_spec
from trainer.train import main, report_to

ROOT = Path(__file__).resolve().parents[2]


def _qa(i: int) -> dict:
    context = f"Order {i} left the warehouse in Porto and arrived after {i % 5 + 2} days."
    answer = f"{i % 5 + 2} days"
    return {
        "id": f"q{i}",
        "question": "How long did the delivery take?",
        "context": context,
        "answers": {"text": [answer], "answer_start": [context.index(answer)]},
    }


def _summ(i: int) -> dict:
    return {
        "id": f"s{i}",
        "document": f"Ticket {i}: the VPN dropped every hour for {i % 3 + 1} days.",
        "summary": f"VPN dropped for {i % 3 + 1} days.",
    }


def _chat(i: int) -> dict:
    return {
        "id": f"c{i}",
        "messages": [
            {"role": "user", "content": f"Reset token {i}?"},
            {"role": "assistant", "content": "Done, it is reset."},
        ],
    }


def _dataset(tmp: Path, task: TaskType, make, n: int = 24) -> Path:
    for split, rows in {"train": range(n), "validation": range(n, n + 6)}.items():
        (tmp / "data" / split).mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist([make(i) for i in rows], schema=task_spec(task).record_schema)
        pq.write_table(table, tmp / "data" / split / "part-00000.parquet")
    return tmp / "data"


def _tiny(tmp: Path, kind: str) -> Path:
    tokenizer = load_tokenizer(PACKAGED_MODEL)
    size = {"vocab_size": tokenizer.vocab_size}
    if kind == "bert":
        model = BertModel(
            BertConfig(
                **size,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=64,
            )
        )
    elif kind == "t5":
        model = T5ForConditionalGeneration(
            T5Config(
                **size,
                d_model=32,
                d_ff=64,
                d_kv=16,
                num_layers=2,
                num_heads=2,
                decoder_start_token_id=0,
            )
        )
    else:
        model = GPT2LMHeadModel(GPT2Config(**size, n_embd=32, n_layer=2, n_head=2, n_positions=256))
    out = tmp / kind
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.mark.parametrize(
    ("task", "records", "kind"),
    [
        (TaskType.extractive_qa, _qa, "bert"),
        (TaskType.summarization, _summ, "t5"),
        (TaskType.chat, _chat, "gpt2"),
    ],
)
def test_trainer_runs_each_task(tmp_path: Path, task: TaskType, records, kind: str) -> None:
    data = _dataset(tmp_path, task, records)
    model = _tiny(tmp_path, kind)
    trainer_task = {
        "extractive-qa": "extractive-qa",
        "summarization": "summarization",
        "chat": "causal-lm",
    }[task.value]
    metrics = main(
        [
            "--task",
            trainer_task,
            "--model",
            str(model),
            "--data-dir",
            str(data),
            "--output-dir",
            str(tmp_path / "out"),
            "--epochs",
            "2",
            "--batch-size",
            "8",
            "--max-length",
            "64",
            "--doc-stride",
            "16",
            "--logging-steps",
            "1",
            *(["--merge-adapter"] if kind == "bert" else []),
        ]
    )
    assert metrics["loss_curve"] and metrics["tokens_per_second"] > 0
    assert metrics["eval"]["eval_loss"] > 0 and metrics["peak_memory_bytes"] > 0
    out = tmp_path / "out"
    assert (out / "adapter_model.safetensors").exists() and (out / "metrics.json").exists()
    loaded, _, info = load_trained(out)
    assert info == {"task": trainer_task, "base_model": str(model), "adapter": True}
    assert sum(p.numel() for p in loaded.parameters()) > 0
    if kind == "bert":  # the merged model is a plain model directory, no adapter needed
        merged = AutoModelForQuestionAnswering.from_pretrained(out / "merged")
        assert not any("lora" in name for name, _ in merged.named_parameters())


def test_mlflow_only_with_a_tracking_uri_and_the_package(monkeypatch, capsys) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert report_to() == "none"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "file:///tmp/mlruns")
    installed = importlib.util.find_spec("mlflow") is not None
    assert report_to() == (["mlflow"] if installed else "none")
    if not installed:
        assert "mlflow is not installed" in capsys.readouterr().err


def test_two_process_ddp_on_cpu(tmp_path: Path) -> None:
    data = _dataset(tmp_path, TaskType.extractive_qa, _qa, n=32)
    model = _tiny(tmp_path, "bert")
    out = tmp_path / "ddp"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",  # a free rendezvous port on this machine
        "--nproc_per_node",
        "2",
        "-m",
        "trainer.train",
        "--model",
        str(model),
        "--data-dir",
        str(data),
        "--output-dir",
        str(out),
        "--epochs",
        "1",
        "--batch-size",
        "4",
        "--max-length",
        "64",
        "--doc-stride",
        "16",
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["world_size"] == 2
    assert (out / "adapter_model.safetensors").exists()


def test_arguments_layer_defaults_yaml_flags_and_reject_unknown_keys(tmp_path: Path) -> None:
    config = tmp_path / "args.yaml"
    config.write_text("epochs: 5\nlora_r: 4\ndata_dir: d\n")
    args = parse_args(["--config", str(config), "--lora-r", "16"])
    assert (args.epochs, args.lora_r, args.learning_rate) == (5, 16, 3e-4)
    config.write_text("epochs: 5\nlora_rank: 4\n")
    with pytest.raises(ValueError, match=r"unknown training argument\(s\) \['lora_rank'\]"):
        parse_args(["--config", str(config)])
    with pytest.raises(SystemExit):
        parse_args(["--data-dir", "d", "--no-such-flag", "1"])
    with pytest.raises(ValueError, match="doc_stride must be smaller"):
        parse_args(["--data-dir", "d", "--doc-stride", "300"])

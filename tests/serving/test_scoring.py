"""Scoring without HTTP: request validation, Azure ML's init()/run(), QA spans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from serving import scoring
from serving.payloads import parse_payload
from serving.scoring import Scorer
from trainer.modeling import find_model_dir

CONTEXT = "Order 7 left the warehouse in Porto and arrived after 4 days."


@pytest.fixture(scope="module")
def scorer(qa_model_dir: Path) -> Scorer:
    return Scorer(qa_model_dir)


def test_qa_answer_is_a_span_of_the_context(scorer: Scorer) -> None:
    out = scorer.run(json.dumps({"question": "How long did it take?", "context": CONTEXT}))
    assert set(out) == {"answer", "score", "start", "end"}
    assert out["answer"] and CONTEXT[out["start"] : out["end"]] == out["answer"]
    assert isinstance(out["score"], float)


def test_batch_form_answers_each_input_in_order(scorer: Scorer) -> None:
    contexts = [CONTEXT, "Ana Silva fixed the printer on Tuesday morning."]
    out = scorer.run(
        json.dumps({"inputs": [{"question": "What happened?", "context": c} for c in contexts]})
    )
    assert len(out["outputs"]) == 2
    for c, answer in zip(contexts, out["outputs"], strict=True):
        assert c[answer["start"] : answer["end"]] == answer["answer"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"question": "Who?"}, "missing field 'context'"),
        ({"question": "Who?", "context": 3}, "field 'context' must be a non-empty string"),
        ({"question": " ", "context": "x"}, "field 'question' must be a non-empty string"),
        ({"document": "a ticket"}, "serves extractive-qa"),
        ({"inputs": []}, "'inputs' must be a non-empty list"),
        ({"inputs": [{"question": "Who?"}]}, "inputs[0] is missing field 'context'"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_invalid_requests_name_the_field(payload: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_payload("extractive-qa", payload)


def test_other_task_shapes() -> None:
    assert parse_payload("summarization", {"document": "VPN down"}) == (
        [{"document": "VPN down"}],
        False,
    )
    chat = {"messages": [{"role": "user", "content": "Reset my token?"}]}
    assert parse_payload("causal-lm", chat) == ([chat], False)
    with pytest.raises(ValueError, match=r"messages\[0\]"):
        parse_payload("causal-lm", {"messages": [{"role": "robot", "content": "hi"}]})


def test_azureml_init_and_run(
    qa_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Azure ML mounts a registered model one folder below AZUREML_MODEL_DIR
    (tmp_path / "qa-model").symlink_to(qa_model_dir, target_is_directory=True)
    monkeypatch.setenv("AZUREML_MODEL_DIR", str(tmp_path))
    assert find_model_dir(tmp_path) == tmp_path / "qa-model"
    scoring.init()
    out = scoring.run(json.dumps({"question": "Where?", "context": CONTEXT}))
    assert CONTEXT[out["start"] : out["end"]] == out["answer"]
    with pytest.raises(ValueError, match="not valid JSON"):
        scoring.run("{not json")


def test_missing_model_dir_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist: pass a trained model directory"):
        find_model_dir(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("gpu", "capability", "asked", "expected"),
    [
        (False, None, "auto", ("cpu", torch.float32)),
        (False, None, "bfloat16", ("cpu", torch.float32)),  # a CPU instance scores in fp32
        (True, (8, 0), "auto", ("cuda", torch.bfloat16)),  # A100
        (True, (7, 5), "auto", ("cuda", torch.float16)),  # a T4: bf16 only emulated
        (True, (8, 0), "float32", ("cuda", torch.float32)),
    ],
)
def test_the_model_goes_to_the_gpu_in_the_configured_dtype(
    monkeypatch: pytest.MonkeyPatch,
    gpu: bool,
    capability: tuple[int, int] | None,
    asked: str,
    expected: tuple,
) -> None:
    """The GPU is what torch reports (its availability and compute capability); the choice is
    the endpoint's own."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpu)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: capability)
    assert scoring.placement(asked) == expected


def test_an_unknown_dtype_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (8, 0))
    with pytest.raises(ValueError, match="TUNEGATE_DTYPE='fp8'"):
        scoring.placement("fp8")


def test_the_endpoint_reads_a_long_context_in_the_windows_evaluation_reads(
    qa_model_dir: Path, tmp_path: Path
) -> None:
    """A model trained on 64-token windows answers a long context served as it was evaluated
    (`trainer.predict.predict`): the same windows, the same span."""
    import shutil

    from trainer.modeling import load_trained
    from trainer.predict import predict

    model_dir = tmp_path / "qa-64"
    shutil.copytree(qa_model_dir, model_dir)
    info = json.loads((model_dir / "model_info.json").read_text())
    (model_dir / "model_info.json").write_text(json.dumps({**info, "max_length": 64}))
    context = " ".join(
        f"Order {i} left the warehouse in {city} and arrived after {i % 6 + 2} days."
        for i, city in enumerate(["Porto", "Lyon", "Graz", "Turku", "Cork", "Bari"] * 4)
    )
    record = {"id": "long", "question": "Where did order 17 leave from?", "context": context}
    model, tokenizer, _ = load_trained(model_dir)
    assert len(tokenizer(context)["input_ids"]) > 3 * 64  # many windows
    [evaluated] = predict(model, tokenizer, "extractive-qa", [record])
    served = Scorer(model_dir).run(json.dumps({"question": record["question"], "context": context}))
    assert served["answer"] == evaluated

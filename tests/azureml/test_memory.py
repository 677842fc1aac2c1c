"""Will a training job fit in its GPUs' memory: DeepSpeed's estimators over model shapes counted
on the meta device, checked before `tunegate azureml export` writes anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs
from typer.testing import CliRunner

from cli.main import app
from flows.config import load_config
from platforms.azureml.memory import GIB, gib
from platforms.azureml.memory_check import check_memory, sharding_of
from platforms.azureml.model_shapes import model_shape
from platforms.azureml.training import AzureMLTrainingBackend
from platforms.training import TrainSpec
from tests.azureml.fake_service import FakeAzureML, ml_client

ROOT = Path(__file__).resolve().parents[2]
SCENARIO_70B = ROOT / "configs" / "azureml" / "llama3-70b-zero3.yaml"
LLAMA3_70B_PARAMS = 70_553_706_496  # Llama-3-70B's weights: 141 GB in bf16
ONE_A100 = [
    "azureml.compute.size=Standard_NC24ads_A100_v4",  # 1 x A100 80 GB
    "azureml.compute.max_nodes=1",
    "azureml.launch.instance_count=1",
    "azureml.launch.gpus_per_node=1",
]


def _export(tmp_path: Path, config: Path, *overrides: str) -> tuple[int, str]:
    sets = [word for o in overrides for word in ("--set", o)]
    result = CliRunner().invoke(
        app, ["azureml", "export", "-c", str(config), "--out", str(tmp_path / "out"), *sets]
    )
    return result.exit_code, " ".join(result.output.split())  # the console wraps long lines


def test_70b_shape_is_llama3_70b_counted_on_the_meta_device() -> None:
    shape = model_shape(
        "azureml://registries/azureml-meta/models/Meta-Llama-3-70B-Instruct/versions/1",
        "causal-lm",
        16,
        [],
    )
    assert shape is not None
    assert shape.params == LLAMA3_70B_PARAMS  # parameters only: the rotary buffers left out
    assert shape.largest_layer_params == 128256 * 8192  # the embedding (lm_head is not tied)
    assert (shape.hidden, shape.layers, shape.logits, shape.weight_bytes) == (8192, 80, 128256, 2)
    # a rank-16 adapter on the 7 projections of each of 80 layers, as peft counts it
    per_layer = 16 * ((8192 + 8192) * 2 + (8192 + 1024) * 2 + (8192 + 28672) * 2 + (28672 + 8192))
    assert shape.lora_params == 80 * per_layer


def test_a_70b_full_fine_tune_on_one_80gb_gpu_is_refused_with_figures(tmp_path: Path) -> None:
    code, output = _export(
        tmp_path, SCENARIO_70B, *ONE_A100, "azureml.launch.accelerate_config=single"
    )
    assert code == 2, output
    assert not (tmp_path / "out").exists()  # refused before anything is written
    # one process holds every state: DeepSpeed's own figure for one GPU, about 20 bytes a weight
    _, states = estimate_zero2_model_states_mem_needs(LLAMA3_70B_PARAMS, 1, 1, cpu_offload=False)
    assert f"model states {gib(states)}" in output
    assert states > 1300 * GIB
    assert "azureml.compute.size Standard_NC24ads_A100_v4" in output
    assert "more than the 80 GiB of each A100" in output
    # what would fit, each with its figure: offload to CPU (and the CPU memory it takes), QLoRA,
    # or more nodes under ZeRO-3
    assert "deepspeed_zero3_offload" in output and "GiB CPU per node" in output
    assert "QLoRA" in output
    assert "azureml.launch.instance_count" in output


def test_the_70b_scenario_fits_under_zero3_on_80_gpus() -> None:
    cfg = load_config(SCENARIO_70B)
    assert (cfg.azureml.launch.instance_count, cfg.azureml.launch.gpus_per_node) == (10, 8)
    found = check_memory(cfg.train.trainer_args(cfg.task.value), cfg.azureml)
    assert found.estimate is not None, found.message
    shape = model_shape(cfg.train.model or "", "causal-lm", 8, [])
    assert shape is not None
    _, states, largest = estimate_zero3_model_states_mem_needs(
        shape.params, 128256 * 8192, num_gpus_per_node=8, num_nodes=10, cpu_offload=False
    )
    assert found.estimate.model_states == states  # DeepSpeed's figure, not ours
    assert largest == 4 * 128256 * 8192  # the embedding gathered whole
    assert found.estimate.total < 80 * GIB
    assert "on 10 x 8 H100" in found.message and "GiB per GPU" in found.message
    print(found.message)


def test_the_70b_scenario_under_zero2_is_refused_and_zero3_named(tmp_path: Path) -> None:
    code, output = _export(
        tmp_path, SCENARIO_70B, "azureml.launch.accelerate_config=deepspeed_zero2"
    )
    assert code == 2, output
    # ZeRO-2 keeps the 16-bit weights whole on every GPU: 2 bytes a weight, 131 GiB alone
    _, states = estimate_zero2_model_states_mem_needs(LLAMA3_70B_PARAMS, 8, 10, cpu_offload=False)
    assert states > 80 * GIB
    assert "azureml.launch.accelerate_config deepspeed_zero3 (launcher accelerate)" in output


def test_a_lora_8b_on_a_16gb_t4_is_refused_and_qlora_fits(tmp_path: Path) -> None:
    """The 16-bit base alone, 8.03B x 2 bytes, is 15 GiB of a T4's 16: with the adapter, the
    activations and the CUDA context it does not fit; a 4-bit base does."""
    config = ROOT / "configs" / "azureml" / "llama3-8b-zero3.yaml"
    code, output = _export(
        tmp_path,
        config,
        "azureml.compute.size=Standard_NC4as_T4_v3",
        "azureml.compute.max_nodes=1",
        "azureml.launch.instance_count=1",
        "azureml.launch.gpus_per_node=1",
        "azureml.launch.accelerate_config=single",
        "train.batch_size=1",
        "train.max_length=1024",
        "train.args.precision=fp16",
    )
    assert code == 2, output
    assert "LoRA of Meta-Llama-3-8B-Instruct (8.03B parameters, adapter 41.9M" in output
    assert "more than the 16 GiB of each T4" in output
    assert "QLoRA" in output.split("Would fit:")[1]


def test_a_lora_8b_under_zero3_on_four_t4s_fits() -> None:
    """Spread over four T4s by ZeRO-3, the same base is under 4 GiB a GPU."""
    cfg = load_config(
        ROOT / "configs" / "azureml" / "llama3-8b-zero3.yaml",
        [
            "azureml.compute.size=Standard_NC64as_T4_v3",  # 4 x T4 16 GB
            "azureml.compute.max_nodes=1",
            "azureml.launch.instance_count=1",
            "azureml.launch.gpus_per_node=4",
            "train.batch_size=1",
            "train.max_length=1024",
            "train.args.precision=fp16",
        ],
    )
    found = check_memory(cfg.train.trainer_args(cfg.task.value), cfg.azureml)
    assert found.estimate is not None
    assert found.estimate.total < 16 * GIB
    assert found.estimate.model_states < 8.03e9 * 2 / 4 + 3 * GIB  # its share, a layer, adapter


def test_an_unknown_model_gets_a_warning_not_a_refusal() -> None:
    cfg = load_config(
        SCENARIO_70B,
        ["train.model=azureml://registries/azureml/models/some-new-model/versions/1", *ONE_A100],
    )
    found = check_memory(cfg.train.trainer_args(cfg.task.value), cfg.azureml)
    assert found.estimate is None
    assert "no memory estimate: train.model" in found.message
    assert "some-new-model" in found.message


def test_a_local_folder_is_counted_as_peft_counts_its_adapter(tmp_path: Path) -> None:
    from accelerate import init_empty_weights
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, LlamaConfig

    small = LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=1000,
    )
    folder = tmp_path / "model" / "data" / "model"  # nested, as catalog models are
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(small.to_dict()))
    shape = model_shape(str(tmp_path / "model"), "causal-lm", 4, ["q_proj", "v_proj"])
    assert shape is not None
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(small)
    adapter = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"]))
    trainable, total = adapter.get_nb_trainable_parameters()
    assert shape.lora_params == trainable
    assert shape.params == total - trainable


@pytest.mark.parametrize(
    ("launcher", "accelerate", "expected"),
    [
        ("torchrun", "ddp", (0, False, False)),
        ("accelerate", "ddp", (0, False, False)),
        ("accelerate", "deepspeed_zero2_offload", (2, True, False)),
        ("accelerate", "deepspeed_zero3", (3, False, False)),
        ("accelerate", "deepspeed_zero3_offload", (3, True, True)),
        ("accelerate", "fsdp", (3, False, False)),
    ],
)
def test_the_zero_stage_and_offload_come_from_the_launch_config(
    launcher: str, accelerate: str, expected: tuple[int, bool, bool]
) -> None:
    cfg = load_config(
        SCENARIO_70B,
        [f"azureml.launch.launcher={launcher}", f"azureml.launch.accelerate_config={accelerate}"],
    )
    found = sharding_of(cfg.azureml)
    assert (found.zero_stage, found.offload_optimizer, found.offload_params) == expected
    assert found.gpus == 80


def test_an_unknown_accelerate_config_is_named() -> None:
    cfg = load_config(SCENARIO_70B, ["azureml.launch.accelerate_config=deepspeed_zero4"])
    with pytest.raises(ValueError, match=r"azureml\.launch\.accelerate_config 'deepspeed_zero4'"):
        sharding_of(cfg.azureml)


def test_a_job_that_cannot_fit_is_refused_before_it_is_submitted(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    cfg = load_config(SCENARIO_70B, [*ONE_A100, "azureml.launch.accelerate_config=single"])
    backend = AzureMLTrainingBackend(ml_client(fake_azureml), cfg.azureml, tmp_path / "jobs")
    spec = TrainSpec(
        name="train-70b",
        data_dir="azureml:tunegate-split@latest",
        args=cfg.train.trainer_args("chat"),
    )
    with pytest.raises(ValueError, match=r"azureml\.compute\.size Standard_NC24ads_A100_v4"):
        backend.submit(spec)
    # it looked for an earlier job of that name, and created nothing: no cluster, no job
    assert [r.method for r in fake_azureml.requests] == ["GET"]


def test_tunegate_run_refuses_a_job_that_cannot_fit_before_any_stage(tmp_path: Path) -> None:
    store = tmp_path / "store"
    sets = [f"store={store}", *ONE_A100, "azureml.launch.accelerate_config=single"]
    result = CliRunner().invoke(
        app, ["run", "-c", str(SCENARIO_70B), *(w for s in sets for w in ("--set", s))]
    )
    assert result.exit_code == 2, result.output
    assert "azureml.compute.size Standard_NC24ads_A100_v4" in " ".join(result.output.split())
    assert not store.exists()  # no sample generated, nothing ingested


def test_lora_on_an_architecture_without_default_targets_names_the_field(tmp_path: Path) -> None:
    from transformers import OPTConfig

    small = OPTConfig(hidden_size=32, ffn_dim=64, num_hidden_layers=1, num_attention_heads=2)
    (tmp_path / "config.json").write_text(json.dumps(small.to_dict()))
    cfg = load_config(SCENARIO_70B, [f"train.model={tmp_path}", "train.lora=true"])
    with pytest.raises(ValueError, match=r"train\.args\.lora_target_modules: .* set them"):
        check_memory(cfg.train.trainer_args(cfg.task.value), cfg.azureml)
    targeted = load_config(
        SCENARIO_70B,
        [f"train.model={tmp_path}", "train.lora=true", "train.args.lora_target_modules=[q_proj]"],
    )
    found = check_memory(targeted.train.trainer_args("chat"), targeted.azureml)
    assert found.estimate is not None and "adapter 0.0M" in found.message

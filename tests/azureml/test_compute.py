"""Compute that exists: a launch the cluster cannot hold is a config error naming the field, in
the config (the VM size table) and at submission (the workspace's sizes and its cluster)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from flows.config import ConfigError, load_config
from platforms.azureml import entities
from platforms.azureml.config import AzureMLConfig
from platforms.azureml.training import AzureMLTrainingBackend
from platforms.training import TrainSpec
from tests.azureml.fake_service import FakeAzureML, ml_client
from tests.azureml.test_export import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("azureml.launch.gpus_per_node=9", r"azureml\.launch\.gpus_per_node 9 .* has: 4 GPUs"),
        (
            "azureml.launch.instance_count=4",
            r"azureml\.launch\.instance_count 4 .*compute\.max_nodes 2",
        ),
        (
            "azureml.compute.size=Standard_NC24ads_A100_v4",
            r"azureml\.launch\.gpus_per_node 4 .*Standard_NC24ads_A100_v4.* 1 GPU \(A100 80 GB\)",
        ),
    ],
)
def test_a_launch_the_cluster_cannot_hold_is_refused_naming_the_field(
    override: str, field: str
) -> None:
    with pytest.raises(ConfigError, match=field):
        load_config(ROOT / "configs" / "azureml.yaml", [override])


def test_the_cli_reports_an_impossible_launch_on_one_line_with_exit_2() -> None:
    result = CliRunner().invoke(
        app,
        [
            "config",
            "show",
            "-c",
            str(ROOT / "configs" / "azureml.yaml"),
            "--set",
            "azureml.launch.gpus_per_node=9",
        ],
    )
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert line.startswith("invalid config: azureml.launch.gpus_per_node 9")


def test_a_size_the_table_does_not_know_is_left_to_the_workspace() -> None:
    config = AzureMLConfig.model_validate(
        {"compute": {"size": "Standard_NC12"}, "launch": {"gpus_per_node": 2}}
    )
    assert config.launch.gpus_per_node == 2


def test_the_shipped_scenarios_give_one_cluster_name_one_size_and_tier() -> None:
    clusters: dict[str, set[tuple[str, str]]] = {}
    for scenario in SCENARIOS:
        compute = load_config(scenario).azureml.compute
        clusters.setdefault(compute.name, set()).add((compute.size, compute.tier))
    assert {name: len(kinds) for name, kinds in clusters.items()} == dict.fromkeys(clusters, 1)
    raw = yaml.safe_load((ROOT / "configs" / "azureml" / "mistral-7b-ddp.yaml").read_text())
    assert raw["azureml"]["compute"]["tier"] == "low_priority"  # still preemptible, own cluster


def _backend(fake: FakeAzureML, tmp_path: Path, **compute: object) -> AzureMLTrainingBackend:
    config = AzureMLConfig.model_validate(
        {
            "compute": {"name": "a100-x4", "size": "Standard_NC96ads_A100_v4", **compute},
            "launch": {"instance_count": 2, "gpus_per_node": 4},
        }
    )
    return AzureMLTrainingBackend(ml_client(fake), config, tmp_path, poll_seconds=0.01)


def test_a_missing_cluster_is_checked_against_the_regions_sizes_then_created(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    _backend(fake_azureml, tmp_path)._ensure_compute()
    assert "GET {location}/vmSizes" in fake_azureml.calls()
    assert fake_azureml.computes["a100-x4"]["properties"]["properties"]["vmSize"] == (
        "Standard_NC96ads_A100_v4"
    )

    # a size the table does not know: the region's list says it has one GPU, not four
    fake_azureml.vm_sizes = [*(fake_azureml.vm_sizes or []), _size("Standard_NC12", gpus=2)]
    backend = _backend(fake_azureml, tmp_path, name="nc12", size="Standard_NC12")
    with pytest.raises(ValueError, match=r"azureml\.launch\.gpus_per_node 4 .*2 GPUs in region"):
        backend._ensure_compute()
    backend = _backend(fake_azureml, tmp_path, name="h100", size="Standard_ND96isr_H100_v5")
    with pytest.raises(ValueError, match=r"azureml\.compute\.size .* not offered .* eastus"):
        backend._ensure_compute()
    assert set(fake_azureml.computes) == {"a100-x4"}  # nothing created for the refused ones


def test_a_size_not_offered_as_low_priority_is_refused(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    fake_azureml.vm_sizes = [_size("Standard_NC96ads_A100_v4", gpus=4, low_priority=False)]
    with pytest.raises(ValueError, match=r"azureml\.compute\.tier low_priority"):
        _backend(fake_azureml, tmp_path, tier="low_priority")._ensure_compute()


def test_sizes_the_identity_may_not_list_are_left_to_the_service(
    fake_azureml: FakeAzureML, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_azureml.vm_sizes = None
    with caplog.at_level(logging.WARNING):
        _backend(fake_azureml, tmp_path)._ensure_compute()
    assert "a100-x4" in fake_azureml.computes
    assert "size not checked" in caplog.text


def test_an_existing_cluster_of_another_tier_or_size_is_refused(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    fake_azureml.add_compute("a100-x4", "Standard_NC96ads_A100_v4", nodes=2)
    _backend(fake_azureml, tmp_path)._ensure_compute()  # the same cluster: used
    with pytest.raises(ValueError, match=r"azureml\.compute\.tier low_priority: .* as dedicated"):
        _backend(fake_azureml, tmp_path, tier="low_priority")._ensure_compute()
    fake_azureml.add_compute("a100-x4", "Standard_NC96ads_A100_v4", nodes=1)
    with pytest.raises(ValueError, match=r"azureml\.launch\.instance_count 2 .* 1 nodes"):
        _backend(fake_azureml, tmp_path)._ensure_compute()
    fake_azureml.add_compute("a100-x4", "Standard_NC24s_v3", nodes=2, priority="LowPriority")
    with pytest.raises(ValueError, match=r"azureml\.compute\.size .* with size Standard_NC24s_v3"):
        _backend(fake_azureml, tmp_path, tier="low_priority")._ensure_compute()
    assert not fake_azureml.bodies("PUT", "/computes/a100-x4")  # never replaced


def _size(name: str, gpus: int, low_priority: bool = True) -> dict[str, object]:
    from tests.azureml.fake_shapes import vm_size

    return vm_size(name, "standardNCFamily", 12, 112, gpus, low_priority)


def test_a_cpu_size_runs_its_processes_without_gpus(
    fake_azureml: FakeAzureML, tmp_path: Path
) -> None:
    """A size the region lists with no GPU (Standard_DS3_v2) takes any gpus_per_node: its
    processes run on the cores, so the GPU count is not checked and the cluster is made; the
    same launch on a size with one GPU is refused."""
    launch = {"gpus_per_node": 2}
    config = AzureMLConfig.model_validate(
        {"compute": {"name": "cpu", "size": "Standard_DS3_v2", "max_nodes": 1}, "launch": launch}
    )
    AzureMLTrainingBackend(ml_client(fake_azureml), config, tmp_path)._ensure_compute()
    assert "GET {location}/vmSizes" in fake_azureml.calls()  # the region's sizes were read
    created = fake_azureml.last_body("PUT", "/computes/cpu")["properties"]["properties"]
    assert created["vmSize"] == "Standard_DS3_v2"
    spec = TrainSpec(name="cpu-job", data_dir=str(tmp_path), args={"task": "extractive-qa"})
    command = entities.training_command(spec, config.launch, config.job)
    assert "--num_processes 2 " in command  # two processes on the one node

    one_gpu = config.model_copy(
        update={
            "compute": config.compute.model_copy(
                update={"name": "gpu1", "size": "Standard_NC6s_v3"}
            )
        }
    )
    one_gpu_backend = AzureMLTrainingBackend(ml_client(fake_azureml), one_gpu, tmp_path)
    with pytest.raises(ValueError, match=r"gpus_per_node 2 .*Standard_NC6s_v3.* 1 GPUs in region"):
        one_gpu_backend._ensure_compute()

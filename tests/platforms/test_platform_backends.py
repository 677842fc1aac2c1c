"""Backends: the config turned into the run's platform objects, once, in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.config import ConfigError, load_config
from platforms.backends import Backends, BackendSettings
from platforms.lineage import Lineage
from platforms.registry import MlflowRegistry
from platforms.training import LocalTrainingBackend


def test_the_config_chooses_the_backends_and_each_is_built_once(tmp_path: Path) -> None:
    cfg = load_config(
        None,
        [f"store={tmp_path}", "rollout.port=8123", "rollout.workers=2", "train.backend=local"],
    )
    backends = cfg.backends()
    assert backends.store.uri == str(tmp_path)
    assert backends.settings.endpoint_port == 8123 and backends.settings.endpoint_workers == 2
    assert isinstance(backends.registry, MlflowRegistry)
    assert backends.registry is backends.registry  # one registry per run, not one per stage
    assert backends.registry.uri == f"sqlite:///{tmp_path / 'mlflow' / 'mlflow.db'}"
    assert isinstance(backends.training, LocalTrainingBackend)
    assert backends.training is backends.training


ON_BLOB = ["store=az://container/prefix", "azure.account_name=acct"]


def test_a_blob_store_training_here_needs_a_tracking_uri(tmp_path: Path) -> None:
    """A local store tracks its runs in its own database; a remote one has none, so a run
    trained here names `tracking.uri` before any work starts (Azure ML training: the
    workspace's tracking)."""
    with pytest.raises(ConfigError, match=r"tracking\.uri is unset and the store az://"):
        load_config(None, ON_BLOB)
    assert load_config(None, [*ON_BLOB, "train.backend=azureml"]).tracking.uri is None
    local = load_config(None, [f"store={tmp_path}"]).backends()
    assert local.tracking_uri == f"sqlite:///{tmp_path.resolve()}/mlflow/mlflow.db"
    assert (tmp_path / "mlflow" / "mlflow.db").is_file()
    assert local.tracking_artifact_root == tmp_path.resolve() / "mlflow" / "artifacts"
    server = load_config(None, [*ON_BLOB, "tracking.uri=http://mlflow.example:5000"])
    assert server.backends().tracking_uri == "http://mlflow.example:5000"
    assert server.backends().tracking_artifact_root is None  # the server's own


def test_a_run_that_trains_nothing_is_tracked_in_the_store_even_with_azure_ml_training(
    tmp_path: Path,
) -> None:
    """Azure ML training tracks runs in the workspace's MLflow by default
    (tests/azureml/test_backends.py); a run that trains nothing (a dry run, `until: split`)
    never connects to the workspace for it: the store's database tracks it."""
    dry = load_config(None, [f"store={tmp_path}", "train.backend=azureml", "until=split"])
    assert dry.backends().tracking_uri == f"sqlite:///{tmp_path.resolve()}/mlflow/mlflow.db"


@pytest.mark.parametrize(
    ("field", "part"),
    [("registry.backend", "registry"), ("train.backend", "training")],
)
def test_a_local_backend_on_a_blob_store_names_the_field_to_change(field: str, part: str) -> None:
    cfg = load_config(None, [*ON_BLOB, "tracking.uri=http://mlflow.example:5000"])
    backends = cfg.backends()
    with pytest.raises(ValueError, match=f"{field}=local needs a local store.*{field}=azureml"):
        getattr(backends, part)


def test_a_local_endpoint_on_a_blob_store_names_the_field_to_change() -> None:
    cfg = load_config(None, [*ON_BLOB, "tracking.uri=http://mlflow.example:5000"])
    backends = cfg.backends()
    with pytest.raises(ValueError, match=r"rollout\.backend=local needs a local store"):
        backends.open_endpoint("qa")


def test_azure_ml_backends_share_one_workspace_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from platforms.azureml import client

    made: list[object] = []

    def connect(workspace: object) -> object:
        made.append(object())
        return made[-1]

    monkeypatch.setattr(client, "connect", connect)
    backends = Backends(
        BackendSettings(store=str(tmp_path), registry="azureml", training="azureml")
    )
    assert backends.registry.client is backends.training.client is made[0]
    assert len(made) == 1
    assert backends.training.storage_account is None  # a local store has no account
    on_blob = Backends(
        BackendSettings(
            store="az://tickets/store",
            storage_options={"account_name": "acme", "anon": False},
            training="azureml",
        )
    )
    # the datastore created over the store's container is in the store's account
    assert on_blob.training.storage_account == "acme"


def test_a_version_comes_with_its_files_here(tmp_path: Path) -> None:
    backends = Backends(BackendSettings(store=str(tmp_path)))
    assert backends.registry.alias("m", "champion") is None
    source = tmp_path / "model"
    source.mkdir()
    (source / "model_info.json").write_text("{}")
    version = backends.registry.register("m", source, {"f1": 1.0}, Lineage())
    backends.registry.set_alias("m", "champion", version.version)
    champion = backends.files_here(backends.registry.alias("m", "champion"))
    assert (Path(champion.path) / "model_info.json").is_file()


def test_a_model_trained_on_azure_ml_is_registered_from_the_job_output(tmp_path: Path) -> None:
    on_azure = Backends(
        BackendSettings(store=str(tmp_path), registry="azureml", training="azureml")
    )
    assert str(on_azure.model_source(str(tmp_path / "m"), "train-abc")).startswith("azureml:")
    mixed = Backends(BackendSettings(store=str(tmp_path), registry="azureml"))
    assert mixed.model_source(str(tmp_path / "m"), "train-abc") == tmp_path / "m"


def test_models_predict_where_evaluate_backend_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """evaluate.backend names a platform once; Backends.evaluation builds the backend that
    predicts: the training backend itself by default, this process beside an Azure ML job."""
    from platforms.azureml import client

    monkeypatch.setattr(client, "connect", lambda workspace: object())
    local = load_config(None, [f"store={tmp_path}"]).backends()
    assert local.evaluation is local.training
    beside_azure = load_config(
        None, [f"store={tmp_path}", "train.backend=azureml", "evaluate.backend=local"]
    ).backends()
    assert isinstance(beside_azure.evaluation, LocalTrainingBackend)
    on_azure = load_config(None, [f"store={tmp_path}", "train.backend=azureml"]).backends()
    assert on_azure.evaluation is on_azure.training and on_azure.evaluation.name == "azureml"


def test_an_evaluation_job_without_an_azure_training_job_is_refused_naming_both_fields() -> None:
    from flows.config import ConfigError

    with pytest.raises(ConfigError, match=r"evaluate\.backend 'azureml'.*train\.backend"):
        load_config(None, ["evaluate.backend=azureml"])
    with pytest.raises(ConfigError, match=r"train\.model azureml:m:1 is an Azure ML model asset"):
        load_config(None, ["train.model=azureml:m:1"])
    assert load_config(None, ["train.backend=azureml", "train.model=azureml:m:1"])


def test_a_local_registry_hands_out_its_own_folder_and_a_local_evaluation_predicts_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry protocol's download: a local version's files are its folder; the local
    evaluation gives the champion's folder to the trainer's prediction code."""
    from platforms.training import TrainingJob

    backends = Backends(BackendSettings(store=str(tmp_path)))
    source = tmp_path / "model"
    source.mkdir()
    version = backends.registry.register("m", source, {}, Lineage(training_job="j"))
    assert backends.registry.download(version) == Path(version.path)

    seen: dict[str, object] = {}

    def predict_models(records, candidate_dir, champion_dir=None, batch_size=32):
        seen.update(records=records, champion=champion_dir, batch=batch_size)
        return {"base": [], "candidate": [], "champion": []}

    import trainer.data
    import trainer.evaluate

    monkeypatch.setattr(trainer.evaluate, "predict_models", predict_models)
    monkeypatch.setattr(trainer.data, "read_split", lambda uri, table, limit, options: [{"id": 1}])
    job = TrainingJob(
        name="j", backend="local", status="completed", output_dir=str(source), log_path=""
    )
    lines: list[str] = []
    backends.evaluation.evaluate(str(tmp_path), job, version, backends.registry, lines.append, 0, 4)
    assert seen == {"records": [{"id": 1}], "champion": Path(version.path), "batch": 4}
    assert lines == ["predicting 1 test records here"]


def test_each_model_name_has_its_own_endpoint_locally_and_on_azure_ml(tmp_path: Path) -> None:
    import re

    from platforms.azureml.config import EndpointConfig, endpoint_name
    from serving.api import DEPLOYMENT_NAME

    backends = Backends(BackendSettings(store=str(tmp_path)))
    demo, mine = (backends.endpoint_state(n) for n in ("tunegate-demo-qa", "helpdesk-qa"))
    assert demo == tmp_path / "endpoints" / "tunegate-demo-qa" and demo != mine

    assert EndpointConfig().for_model("helpdesk-qa").name == "helpdesk-qa"
    assert EndpointConfig(name="tunegate-phi35").for_model("helpdesk-qa").name == "tunegate-phi35"
    odd = ["helpdesk_qa", "3rd.model", "a" * 40, "a" * 40 + "b", "qa"]
    names = [endpoint_name(n) for n in odd]
    assert all(re.fullmatch(DEPLOYMENT_NAME, n) for n in names), names  # Azure ML's naming rule
    assert len(set(names)) == len(odd) and "helpdesk-qa" not in names
    on_azure = Backends(BackendSettings(store=str(tmp_path), endpoint="azureml"))
    assert on_azure.endpoint_state("helpdesk-qa").name == "helpdesk-qa"


def test_an_endpoint_that_outlives_the_run_says_how_to_stop_it(tmp_path: Path) -> None:
    local = Backends(BackendSettings(store=str(tmp_path / "my store")))
    stop = f"`tunegate endpoint stop --model helpdesk-qa --store '{tmp_path / 'my store'}'`"
    assert local.endpoint_stays_up("helpdesk-qa") == (
        f"the endpoint stays up after this run; {stop} stops it and its traffic collector"
    )
    on_azure = Backends(BackendSettings(store=str(tmp_path), endpoint="azureml"))
    assert on_azure.endpoint_stays_up("helpdesk-qa") == (
        "the Azure ML endpoint helpdesk-qa stays up (and is billed) after this run; "
        "`az ml online-endpoint delete --name helpdesk-qa` deletes it"
    )

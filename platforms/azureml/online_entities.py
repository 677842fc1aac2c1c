"""The online endpoint and its deployments as Azure ML entities: pure functions, no service calls.

The same builders feed the live endpoint backend (platforms/azureml/endpoint.py) and `tunegate
azureml export`, so what is exported is exactly what would be created.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from azure.ai.ml.entities import (
    CodeConfiguration,
    DataCollector,
    DeploymentCollection,
    ManagedOnlineDeployment,
    ManagedOnlineEndpoint,
    Model,
    OnlineRequestSettings,
    ProbeSettings,
)

from platforms.azureml.config import EndpointConfig
from platforms.azureml.entities import SCORE_SCRIPT, environment
from platforms.azureml.environment import serving_spec
from serving.collect import INPUTS, OUTPUTS, VERSION_ENV
from trainer.spread import DEVICE_MAP_ENV, LOAD_IN_4BIT_ENV


def online_endpoint(
    config: EndpointConfig,
    traffic: dict[str, int] | None = None,
    mirror: dict[str, int] | None = None,
) -> ManagedOnlineEndpoint:
    endpoint = ManagedOnlineEndpoint(
        name=config.name, auth_mode="key", description="tunegate online endpoint"
    )
    if traffic is not None:
        endpoint.traffic = traffic
    if mirror is not None:
        endpoint.mirror_traffic = mirror
    return endpoint


def _version_label(model: str | Model, tags: dict[str, Any]) -> str | None:
    """The `name:version` a deployment's collected records are labelled with: its tunegate
    version tag (a rollout's), else its model asset reference (`azureml:name:version`, an
    export's); None for a reference to no one version (`@latest`)."""
    if "tunegate.version" in tags:
        return str(tags["tunegate.version"])
    if isinstance(model, str) and re.fullmatch(r"azureml:[^:@/]+:[^:@/]+", model):
        return model.removeprefix("azureml:")
    return None


def online_deployment(
    name: str,
    config: EndpointConfig,
    model: str | Model,
    code_dir: Path | None,
    tags: dict[str, Any],
    env_context: Path | None = None,
) -> ManagedOnlineDeployment:
    """A deployment running serving/'s init()/run() (`code_dir`: the staged scoring code) with
    probes fit for slow-loading models; `code_dir` None: an MLflow model's no-code deployment,
    no scoring script and no environment (Azure ML builds both from the model's MLmodel and
    requirements; its pyfunc runs the same scoring code). Application Insights as the config
    says; data collection only with the scoring code, which masks what it collects (a no-code
    deployment's payload logging would collect requests unmasked: it is not turned on)."""
    collector = None
    if config.collect and code_dir is not None:
        collector = DataCollector(
            collections={name: DeploymentCollection(enabled="true") for name in (INPUTS, OUTPUTS)},
            sampling_rate=config.collect_sample_rate,
        )
    probe = ProbeSettings(
        initial_delay=config.initial_delay_seconds, period=10, timeout=10, failure_threshold=30
    )
    scoring: dict[str, Any] = {}
    if code_dir is not None:
        scoring = {
            "environment": environment(config.environment, env_context, serving_spec(config.gpu)),
            "code_configuration": CodeConfiguration(
                code=str(code_dir), scoring_script=SCORE_SCRIPT
            ),
        }
    return ManagedOnlineDeployment(
        name=name,
        endpoint_name=config.name,
        model=model,
        **scoring,
        instance_type=config.instance_type,
        instance_count=config.instance_count,
        request_settings=OnlineRequestSettings(
            request_timeout_ms=config.request_timeout_ms,
            max_concurrent_requests_per_instance=config.max_concurrent_requests,
        ),
        liveness_probe=probe,
        readiness_probe=probe,
        app_insights_enabled=config.app_insights,
        data_collector=collector,
        environment_variables={
            "TOKENIZERS_PARALLELISM": "false",
            "WORKER_COUNT": str(config.workers),  # Azure ML's inference server reads it
            "TUNEGATE_DTYPE": config.dtype,  # serving/scoring.py: the model's dtype on a GPU
            DEVICE_MAP_ENV: config.device_map,  # trainer/spread.py: over the instance's GPUs
            LOAD_IN_4BIT_ENV: "1" if config.load_in_4bit else "0",
            "TUNEGATE_COLLECT": "1" if config.collect else "0",  # serving/scoring.py
            # the version label the collected records carry (serving.collect.AzureMLSink)
            **({VERSION_ENV: label} if (label := _version_label(model, tags)) else {}),
            "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": "",  # the masker's: the bundled list, offline
        },
        tags=tags,
    )

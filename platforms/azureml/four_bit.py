"""Whether a config's 4-bit loading can run where it asks for it (`azureml.endpoint.load_in_4bit`).

4-bit weights are bitsandbytes' (trainer/spread.py), which loads them on a GPU only; tunegate's
environments do not install it (their locks, platforms/azureml/locks/). So 4-bit loading is
refused when the config loads unless the deployment runs on a GPU size and both the deployment
and the evaluation job (which predicts as the endpoint does, in the training environment) run in
an environment the config names itself, whose packages are the image's business.
"""

from __future__ import annotations

import re
from typing import Any

from platforms.azureml.cuda_lines import GPU_SERVING_ENV, LOCKS, TRAINING_ENV

PACKAGE = "bitsandbytes"


def check_4bit(config: Any) -> None:
    """A ValueError naming azureml.endpoint.load_in_4bit when `config` (an AzureMLConfig) asks
    for 4-bit weights on a CPU size, or in a tunegate environment without bitsandbytes."""
    endpoint = config.endpoint
    if not endpoint.load_in_4bit:
        return
    if not endpoint.gpu:
        raise ValueError(
            f"azureml.endpoint.load_in_4bit: azureml.endpoint.instance_type "
            f"{endpoint.instance_type} has no GPU, and 4-bit weights ({PACKAGE}) load on a GPU; "
            "use a GPU size or set load_in_4bit false"
        )
    for environment, lock, field in (
        (endpoint.environment, GPU_SERVING_ENV, "azureml.endpoint.environment"),
        (config.environment, TRAINING_ENV, "azureml.environment"),  # the evaluation job's
    ):
        named = environment.asset or environment.image or environment.build_context
        if not named and not _locked(lock, PACKAGE):
            raise ValueError(
                f"azureml.endpoint.load_in_4bit: the {lock} environment does not install "
                f"{PACKAGE} (platforms/azureml/locks/{lock}.txt); set {field} to an image that "
                "has it, or load_in_4bit false"
            )


def _locked(environment: str, package: str) -> bool:
    lock = LOCKS / f"{environment}.txt"
    pattern = rf"^{re.escape(package)}=="
    return lock.exists() and re.search(pattern, lock.read_text(), re.MULTILINE) is not None

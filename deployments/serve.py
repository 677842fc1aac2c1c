"""Serve the `retrain` flow's two deployments from this process: `retrain/nightly`, `retrain/manual`.

    python deployments/serve.py                      # what `tunegate deployments serve` runs
    tunegate deployments serve --cron "0 3 * * 1-5" --timezone Europe/Lisbon \
        --config configs/local.yaml

A runnable script only: the deployments are built by `flows.deployments` (from
`deployments/prefect.yaml`, next to this file), which the `tunegate` CLI imports as well. The names
below are re-exported for code that loaded this file by path.
"""

from __future__ import annotations

from flows.deployments import (
    MANUAL,
    NIGHTLY,
    PREFECT_YAML,
    DeploymentSpec,
    build_deployments,
    read_specs,
    serve_deployments,
)

__all__ = [
    "MANUAL",
    "NIGHTLY",
    "PREFECT_YAML",
    "DeploymentSpec",
    "build_deployments",
    "read_specs",
    "serve_deployments",
]

if __name__ == "__main__":
    serve_deployments()

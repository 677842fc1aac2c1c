"""Orchestration only: the `retrain` flow (the DAG), its config, run summary and deployments.

`config.PipelineConfig` is every stage's settings and turns itself into the run's platform
objects (`backends()`); `retrain.retrain` calls the eight stage tasks of `tasks/` with them;
`summary` keeps what the run did and the lineage; `deployments` builds the Prefect deployments.
"""

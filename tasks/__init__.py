"""The eight stages, one module each, plus their helpers.

A stage module (ingest, screen, approve, split, train, evaluate, register, rollout) holds its
config, its logic as plain functions and a thin Prefect `@task` that takes the run's `Backends`
first. Stage modules never import each other: what one stage hands the next is a typed result
(`DatasetRef`, `Screened`, `ApprovalRecord`, `TrainingJob`, `EvalReport`, `ModelVersion`), and
what both need lives in a helper module (`records`, `data_stage`, `gate`, `rollout_policy`, ...)
or in the `screening` package below (`screening.report`, `screening.config`, `screening.policy`). What a task type
means comes from `trainer.taskspec`.
"""

"""`tunegate config`: the validated pipeline config (defaults filled in) and its JSON schema."""

from __future__ import annotations

import json
import sys

import typer
import yaml

from cli.common import ConfigOpt, SetOpt, load_cli_config

config_app = typer.Typer(help="Inspect the pipeline config.", no_args_is_help=True)


@config_app.command("show")
def config_show(config: ConfigOpt = None, set: SetOpt = None) -> None:
    """Print the validated config with every default filled in."""
    cfg = load_cli_config(config, set)
    yaml.safe_dump(cfg.model_dump(mode="json"), sys.stdout, sort_keys=False)


@config_app.command("schema")
def config_schema() -> None:
    """Print the JSON schema of the whole pipeline config (every field, with its description)."""
    from flows.config import PipelineConfig

    print(json.dumps(PipelineConfig.model_json_schema(), indent=2))

"""`python -m cli`: the `tunegate` command."""

from cli.main import app

app()

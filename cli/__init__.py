"""The `tunegate` command line: `cli.main` builds the app, one module per command group."""

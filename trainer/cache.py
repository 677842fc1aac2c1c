"""The user's cache for tunegate: `TUNEGATE_CACHE`, else `$XDG_CACHE_HOME/tunegate`, else
`~/.cache/tunegate`. What is kept there can always be made again (a migrated empty MLflow
database, the person reader's ONNX graph, Azure ML models and endpoint state of an `az://`
store); deleting it costs time only. Here, in the lowest layer, because every Azure ML job's
code (the trainer and the screen) may need it."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache() -> Path:
    """The cache folder (not created here)."""
    if os.environ.get("TUNEGATE_CACHE"):
        return Path(os.environ["TUNEGATE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tunegate"

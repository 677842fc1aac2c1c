"""Metrics that ship with the repo: SQuAD-style EM/F1 and ROUGE. Nothing loads from a hub.

`scores.py` holds the plain functions; `squad/` and `rouge/` wrap them as `evaluate` modules,
loaded by their directory path with `load_metric` (never by a hub name such as "squad", which
`evaluate.load` would fetch from the Hugging Face Hub at run time).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

SQUAD_MODULE = str(Path(__file__).parent / "squad")
ROUGE_MODULE = str(Path(__file__).parent / "rouge")


@functools.cache
def load_metric(module_dir: str) -> Any:
    """One of the repo's `evaluate` modules, loaded from its directory (offline)."""
    script = Path(module_dir) / f"{Path(module_dir).name}.py"
    if not script.is_file():
        raise ValueError(
            f"{module_dir} is not a metric module of this repo (no {script.name}): use "
            "trainer.metrics.SQUAD_MODULE or ROUGE_MODULE"
        )
    os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
    import evaluate

    return evaluate.load(str(script.resolve()))  # a local script path: never a Hub lookup

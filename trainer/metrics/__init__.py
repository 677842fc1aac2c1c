"""Metrics that ship with the repo: SQuAD-style EM/F1 and ROUGE. Nothing loads from a hub.

`scores.py` holds the plain functions; `squad/` and `rouge/` wrap them as `evaluate` modules for
`evaluate.load(path)`.
"""

from pathlib import Path

SQUAD_MODULE = str(Path(__file__).parent / "squad")
ROUGE_MODULE = str(Path(__file__).parent / "rouge")

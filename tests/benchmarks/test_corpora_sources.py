"""Every corpus of benchmarks/corpora/ says where it comes from: an entry in its SOURCES.md."""

from __future__ import annotations

from pathlib import Path

CORPORA = Path(__file__).resolve().parents[2] / "benchmarks" / "corpora"


def test_every_corpus_file_has_a_sources_entry() -> None:
    sources = (CORPORA / "SOURCES.md").read_text(encoding="utf-8")
    files = sorted(p.name for p in CORPORA.iterdir() if p.suffix in {".jsonl", ".json", ".gz"})
    assert len(files) >= 20
    missing = [name for name in files if f"`{name}`" not in sources and f"## {name}" not in sources]
    assert missing == [], (
        f"add the source, commit and licence of {missing} to benchmarks/corpora/SOURCES.md"
    )

"""Readers of the external corpora's sources: each module turns one kind of source's files (the
sources' own test cases and labelled data, at the commits SOURCES.md names) into corpus records
(`records.record`). `benchmarks/corpora/build.py` runs them and writes the `.jsonl` files."""

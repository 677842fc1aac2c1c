"""Screening: what a dataset must not carry into training, found and acted on record by record.

Beside `trainer/` and `serving/`, below the stages: `tasks/screen.py` is its stage wrapper (Dask,
the store, Prefect artifacts), and evaluate screens predictions with the same detectors.

- `entities`: the entity types known (Presidio's and credential types), without loading detectors
- `detectors`: Presidio with spaCy, the person-name recognizer (`names`, words in `name_words`)
  and the credential recognizer (`credentials`), a batch of texts at a time
- `content_safety`: toxicity: the prose of a text (code left out), abusive terms, the local
  model's scores, and Azure AI Content Safety as the service backend
- `model_folder`: models of the user's own in local Hugging Face folders (a token classifier
  for person names, a text classifier for toxicity): which labels count, checked at config time
- `policy`: `ScreenConfig` (the rules) and `apply_policy` (one record decided and redacted)
- `redact`, `surrogates`: placeholders or realistic fakes, QA answers kept at their offsets
- `scan`: a batch of records screened (`screen_records`) and the tallies added up into the report
- `report`: `ScreenReport`, `Screened` (the stage's result) and the markdown a reviewer reads
- `outputs`: a model's predictions screened for personal data their input did not hold (the
  evaluate stage's PII check)
"""

"""Screening: what a dataset must not carry into training, found and acted on record by record.

Beside `trainer/` and `serving/`, below the stages: `tasks/screen.py` is its stage wrapper (Dask,
the store, Prefect artifacts), and evaluate screens predictions with the same detectors.

The core, at this level:
- `entities`: the entity types known (Presidio's, our own, credential types), without loading
  detectors
- `finder_table`: one row per finder: its entities, recognizer, surrogate, default rule and
  context words (what `entities`, `detectors`, `policy` and `surrogates` read)
- `recognizers`: `FinderRecognizer`, Presidio's face of a finder
- `detectors`: Presidio with spaCy and the screen's recognizers (the table's, person names), a
  batch of texts at a time; `PatternDetectors` without spaCy
- `policy`: `ScreenConfig` (the rules) and `apply_policy` (one record decided and redacted)
- `redact`, `surrogates`: placeholders or realistic fakes, QA answers kept at their offsets
- `scan`: a batch of records screened (`screen_records`) and the tallies added up into the report
- `report`: `ScreenReport`, `Screened` (the stage's result) and the markdown a reviewer reads
- `outputs`: a model's predictions screened for personal data their input did not hold (the
  evaluate stage's PII check) and the masker of an endpoint's collected traffic
- `code_text`: which part of a text is code (the toxicity screen and the person reader read
  around it)
- `model_folder`: models of the user's own in local Hugging Face folders (a token classifier
  for person names, a text classifier for toxicity): which labels count, checked at config time

By idea, below it:
- `finders/`: structured values: phones, cards, IBANs, e-mail and street addresses, credentials
- `persons/`: person names: the name rules, their word lists and the person reader
- `toxicity/`: abusive terms, their disguises, hate aimed at a group, the abuse classifier, the
  local score and the Azure AI Content Safety backend
- `data/`: the shipped word lists, catalogues and weights; `data/build/` the scripts that
  rebuild them
"""

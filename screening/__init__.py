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

- `shipped`: the data files of `data/`, each read once

By idea, below it:
- `finders/`: structured values, one `find_*` function each, registered by the table:
  `phones`, `cards`, `ibans`, `emails`; `addresses` with its `address_grammar` (types, states,
  postcodes, tails), `address_forms` (the house-number-first patterns), `address_lexicon`
  (libpostal's street types), `address_towns` (streets before a known town) and
  `address_typed` (misspelt types, routes and grids); `credentials` with `credential_values`
  (what a value and its context look like), `credential_plugins` (detect-secrets),
  `credential_rules` (gitleaks' and Titus' catalogues) and `go_regex` (their RE2 in Python)
- `persons/`: person names: `names` (the rules' recognizer and its install), `name_runs` (runs
  of name words in context), `name_text` (what the rules read in a text), `faker_names` and
  `name_list` (the name lists), `name_words` (the words around names), `person_model` (the
  reader, a token classifier fine-tuned on tweets)
- `toxicity/`: `score` (a text's worst prose sentence, local backend), `terms` (abusive terms),
  `group_hate`, `disguise` (disguised terms read back), `classifier` (the shipped abuse
  classifier), `azure` (Azure AI Content Safety)
- `data/`: the shipped word lists, catalogues and weights; `data/build/` the scripts that
  rebuild them (`update_*.py`, `train_person_model.py`, `make_toxicity_classifier.py`)
"""

"""Person names: found by rules beside spaCy's PERSON, and read by a small token classifier.

- `names`: the name rules (spaCy's PERSON minus products, plus names by list and context),
  with `name_runs` (runs of name words in context), `name_text` (what they read in a text) and
  `faker_names` (Faker's first and last names)
- `name_words`: the words the rules read around a name (titles, greetings, context words)
- `name_list`: names-dataset's first and last names, extracted (`data/person_names.tsv.gz`)
- `person_model`: the person reader, a token classifier fine-tuned on tweets, with its vetoes
"""

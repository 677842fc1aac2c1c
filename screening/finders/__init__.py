"""Finders of structured values: each module holds a function from a text to its spans (entity,
offsets, score), registered by one row of the table of finders (`screening.finder_table`);
`screening.detectors` wraps it in a Presidio recognizer.

- `phones`: phone numbers of every region (libphonenumber), scored by the words around them
- `phone_words`: what those words say (a phone word, a reference word, when to call, a
  signature)
- `cards`: payment card numbers of every network (Luhn-checked)
- `ibans`: IBANs of every country in the registry (`data/iban_formats.tsv`), check digits verified
- `emails`: e-mail addresses as RFC 5322 writes them, with a known top-level domain
- `addresses`: street addresses of the US, Canada, the UK and continental Europe, from
  `address_grammar`, `address_forms`, `address_lexicon`, `address_towns`, `address_typed`
- `credentials`: credentials and secrets: the free-text rules, with `credential_values` (what
  a value and its context look like) and `credential_plugins` (detect-secrets' plugins)
- `credential_rules`: the vendor formats of gitleaks' and Titus' catalogues (`data/`), their
  Go regexes read by `go_regex`
"""

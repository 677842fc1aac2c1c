"""Toxicity: what the toxicity screen scores, locally or with Azure AI Content Safety.

The local backend (`local_toxicity`) scores the *prose* of a text, never its code: fenced code
blocks, inline code and lines that read as code (`prose`) are left out, because a language model
of offensive English takes `rm -rf`, `kill -9` or ```` ```sh ```` for abuse (a chat line
`kill yourself` or `let me ...` is prose, not a shell or JavaScript line). What is left is cut
into sentences, and each is scored two ways:

- **abusive terms** (`abusive_terms`): slurs, threats of violence, strong profanity and insults
  aimed at someone, sexual harassment, and calls to kill or dehumanise a group, from the lists
  below. Swearing aimed at no one (`oh fuck`, `that's fucking cool`) is no term: friends talk so
  (the classifier reads such a sentence without the expletives; the model flags it at most). A sentence holding one scores 1.0: it is abusive whatever the model says (the model
  scores `niglet` 0.03 and `I'll slice your throat` 0.3). A word with an innocent sense
  (`cracker`, `dike`, `colored`, `negro`, `trash`, `cut`, `shoot`) counts only in the forms that
  aim it at a person (`are you a dike`, `you stupid cracker`, `colored folks`, `I'll cut you`,
  not `a cracker with cheese`, `the Negro Leagues`, `I'll cut you a slice`). Disguised terms
  (`f*ck`, `b!tch`, `sh1t`, `f u c k`, `fück`, Cyrillic look-alikes) are read back in plain
  letters first (`undisguised`).
- **the abuse classifier** (`abuse_classifier`): a logistic regression over hashed character and
  word n-grams, trained offline on public labelled abuse that the benchmark's test halves do not
  hold (`screening/data/toxicity_classifier.npz`, screening/data/build/make_toxicity_classifier.py).
  At or above its cut-off (calibrated so that at most 0.2% of everyday conversations and 0.5% of
  ordinary tweets would be dropped) a sentence scores 1.0, like a term: it catches insults no
  list holds (`you ugly ass clown`) and leaves mild ones (`Are you stupid?`) to the model.
- **the model**: alt-profanity-check's probability that the sentence is offensive. It scores
  mild words high wherever they stand (`What a stupid rule!` 0.998, `that sucks` 0.95, `I was
  sick.` 0.8), so on its own it is a reason to *flag* (keep, count, show a reviewer), not to
  drop; by default only a score of 1.0 drops (see `ToxicityConfig`).

A text scores the worst of its sentences, with why (`Toxicity`: `abusive term`, `classifier
0.73`, `model`), which the drop reason names. Each sentence keeps its place in the text
(`sentence_toxicity`), so that a long record's few toxic sentences can be replaced by
`<TOXICITY>` instead of the record being dropped (`screening.scan.record_toxicity`,
`toxicity.long_text_sentences`). Measured on dialogue, chat with code and abuse written
by others in `benchmarks/toxicity.py` (docs/benchmarks.md).

Azure AI Content Safety (`content_safety_scores`) is the optional service backend: the REST API
(`POST {endpoint}/contentsafety/text:analyze`) with the key from an environment variable; the
worst category severity (0, 2, 4 or 6) becomes a score in [0, 1] so the same thresholds apply.
Throttling and server errors are retried with backoff; anything else is an answer and raised.

- `score`: `local_toxicity`, `sentence_toxicity` and `term_scores` (a text's prose sentences,
  scored and placed; its worst, with why)
- `terms`: the abusive terms and `abusive_terms`
- `group_hate`: hate aimed at a protected group
- `disguise`: disguised terms read back in plain letters (`undisguised`)
- `classifier`: the shipped abuse classifier (`data/toxicity_classifier.npz`)
- `azure`: Azure AI Content Safety (`content_safety_scores`)
"""

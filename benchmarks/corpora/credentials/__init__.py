"""A measurement corpus for credential detection: tickets with planted credentials, and clean ones.

    from benchmarks.corpora.credentials.corpus import corpus
    planted, clean = corpus(n_planted=500, n_clean=500, seed=1)

Planted tickets carry one or two credentials written in one of the surface forms of
`forms.FORMS` (form name -> maker), inside ordinary support-ticket sentences (`samples.templates`
scenarios), at a random position, with varied wording, casing, punctuation, quoting and line
breaks. Each knows its planted values. Credentials are random every time (`secret_values`):
passwords of varied character classes and lengths (joined passphrases, quoted passphrases with
spaces), hex / base64 / alphanumeric tokens, vendor-format tokens (AWS, GitHub, GitLab, Slack,
Stripe, SendGrid, npm, Telegram, Twilio, JWT, private keys, Azure connection strings).

Clean tickets carry no credential but many things that look random or mention one: order,
invoice and ticket numbers, UUIDs, commit SHAs, checksums, tracking numbers, SKUs, versions, MAC
addresses, paths, URLs without credentials, base64 in ordinary contexts, "I forgot my password",
"reset password link", "the API key field is empty", "Password: ********". `rates.measure`
turns a finder's spans on both into catch per form and false drops.

Conventions a detector cannot guess, so the generator keeps to them: an unquoted password does
not end in sentence punctuation (. , ; : ?) and no password holds quotes, brackets, commas,
semicolons, backslashes or spaces unless it is quoted.
"""

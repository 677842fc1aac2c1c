"""A seeded corpus for measuring person-name recall and product false positives.

Every ticket knows the character spans of the names planted in it (`names`) and of the product
names in it (`products`). Names are drawn (`people`) from the Latin-script first and last names
of Faker's person providers of `words.LOCALES`; a name is put in a ticket in one of
`corpus.FORMS` (a placement and a surface: greeting, sign-off, question, list, all caps, lower
case, possessive...). Clean tickets (form `clean`) hold no name, only products and common words
that are also names (Will, May, Mark...). `rates.measure` turns a finder's spans on them into
recall per form and false positives.

    from benchmarks.corpora.names.corpus import generate
    tickets = generate(500, seed=1)

`held_out=True` draws only names that `screening.persons.faker_names.held_out` keeps out of the
recognizer's list when it is built with `exclude_held_out=True`: recall on names the list has
never seen.
"""

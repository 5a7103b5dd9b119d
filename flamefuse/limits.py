"""The bounds on user input and on searches (issue 28 item 4), in one light module (``flamefuse
derive`` imports it at start-up).

``MAX_BYTES``: a spec file is read only up to this size (a spec is a few hundred bytes;
``/dev/zero`` or a huge file is refused). ``MAX_DEPTH``: brackets and parentheses nest at most
this deep (the parsers recurse once per level). ``LIMIT``: invariants kept, derived and printed
by default (``derive --limit``). ``TIME_LIMIT``: seconds of search by default
(``derive --time-limit``).
"""
MAX_BYTES = 1 << 20
MAX_DEPTH = 64
LIMIT = 32
TIME_LIMIT = 60.0

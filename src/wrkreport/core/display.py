"""Display: a value cut short for a one-line message (an error, a check, a usage line) or a chart label.

One rule cuts text for a message, `cut`: at most limit characters, '...' marking the cut
within them; with count=True the first limit characters stay and the full length follows
('99999... (5000 characters)'), so a pasted 5,000-digit argument still tells its size.
What differs between callers is only whether the reader must see the value's exact
characters (quoted by repr, control characters escaped) and what the value can be:

- quote(text): a line of a load generator's output, a field of vegeta's CSV: cut first,
  then quoted, so the quotes close ('abc...');
- argument(text): a command-line argument in a usage message: quoted, and a long one
  keeps 40 characters and tells its length;
- show(value): any value read from a run (a manifest field, a file name in its directory,
  a field of a .hist.json): its repr, cut after quoting (escapes count toward the limit; a
  long one loses its closing quote), a list or an object named by its kind (its contents
  could be anything, of any size);
- cut_words(text, limit): a label in a figure, for a reader of a chart, not of a message:
  cut at a word boundary, '\u2026' marking the cut.
"""

from __future__ import annotations

ARGUMENT_LIMIT = 40  # characters of a command-line argument shown before its length


def cut(text: str, limit: int, *, count: bool = False, quoted: bool = False) -> str:
    """Return text of at most limit characters, '...' ending it when it is longer; quoted: as repr shows it.

    >>> cut("abcdefgh", 6), cut("abc", 6), cut("abcdefgh", 6, quoted=True)
    ('abc...', 'abc', "'abc...'")
    >>> cut("9" * 5000, 4, count=True), cut("9" * 5000, 4, count=True, quoted=True)
    ('9999... (5000 characters)', "'9999'... (5000 characters)")
    """
    shown = repr if quoted else str
    if len(text) <= limit:
        return shown(text)
    if count:
        return f"{shown(text[:limit])}... ({len(text)} characters)"
    return shown(text[: limit - 3] + "...")


def quote(text: str, limit: int = 60) -> str:
    """Return text quoted for a message (repr: control characters escaped), cut to limit characters first."""
    return cut(text, limit, quoted=True)


def argument(text: str) -> str:
    """Return a command-line argument quoted for a message: 'x' -> "'x'", 5,000 digits -> "'99...99'... (5000 characters)" (its first 40)."""
    return cut(text, ARGUMENT_LIMIT, count=True, quoted=True)


def show(value: object, limit: int = 40) -> str:
    """Return a value read from a document for a message: its repr (a list or an object by kind), cut to limit characters.

    >>> show("a\\nb"), show("x" * 100, 10), show({"k": 1}), show([1]), show(None)
    ("'a\\\\nb'", "'xxxxxx...", 'an object', 'a list', 'None')
    """
    text = "an object" if isinstance(value, dict) else "a list" if isinstance(value, list) else repr(value)
    return cut(text, limit)


def cut_words(text: str, limit: int) -> str:
    """Return a label cut at a word boundary to at most limit characters, with an ellipsis when cut.

    >>> cut_words("excluded: every repeat was excluded", 24)
    'excluded: every repeat\u2026'
    """
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:(") + "\u2026"

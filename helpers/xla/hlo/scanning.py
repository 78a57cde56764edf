"""Scanning HLO text: brackets, quotes and the commas and spaces between
them.

HLO nests brackets freely (tuple shapes in parentheses, layouts in
braces, attribute values with their own braces and quoted strings), so
`helpers.xla.hlo.parsing` never splits a line on a plain comma or space:
it asks these functions for the ones outside every bracket and quote.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator


CLOSING = {"(": ")", "[": "]", "{": "}"}


def unquoted_chars(text: str, start: int = 0
                    ) -> Iterator[tuple[int, str, int]]:
    """``(index, char, depth)`` of the characters outside quoted strings
    (``"..."`` or ``'...'``, escapes allowed), from ``start``; ``depth``
    counts the brackets open once ``char`` is read (an opening bracket
    raises it, a closing one lowers it)."""
    depth, quote, escaped = 0, "", False
    for at in range(start, len(text)):
        char = text[at]
        if quote:
            if char == quote and not escaped:
                quote = ""
            escaped = char == "\\" and not escaped
            continue
        if char in "\"'":
            quote = char
            continue
        if char in CLOSING:
            depth += 1
        elif char in CLOSING.values():
            depth -= 1
        yield at, char, depth


def matching(text: str, start: int) -> int:
    """The index of the bracket closing the one at ``start``, skipping
    quoted strings and nested brackets."""
    for at, char, depth in unquoted_chars(text, start):
        if depth == 0 and char in CLOSING.values():
            if char != CLOSING[text[start]]:
                break  # "(...}": the bracket is never closed
            return at
    raise ValueError(f"unbalanced {text[start]!r}")


def top_level(text: str) -> Iterator[tuple[int, str]]:
    """``(index, char)`` of the characters outside brackets and quotes."""
    for at, char, depth in unquoted_chars(text):
        if depth == 0 and char not in CLOSING.values():
            yield at, char


def split_top(text: str) -> list[str]:
    """Split at the commas outside brackets and quotes; drop empty parts."""
    cuts = [at for at, char in top_level(text) if char == ","]
    parts = [text[a + 1:b] for a, b in zip([-1] + cuts, cuts + [len(text)])]
    return [part for part in parts if part.strip()]


def token_end(text: str, start: int) -> int:
    """Where the token starting at ``start`` ends: the first space outside
    brackets (a tuple shape has spaces inside its parentheses)."""
    space = next((at for at, char in top_level(text[start:])
                  if char == " "), None)
    if space is None:
        raise ValueError("no space after the shape")
    return start + space


def last_top_space(text: str) -> int:
    """The index of the last space outside brackets and quotes, or -1."""
    spaces = [at for at, char in top_level(text) if char == " "]
    return spaces[-1] if spaces else -1


def unquoted(text: str) -> str:
    """A quoted attribute value's content (``"..."`` or ``'...'``), its
    C-style escapes undone; any other text as it is.

    Example:
        >>> unquoted('"a \\"b\\""'), unquoted("'o\\'k'"), unquoted("kLoop")
        ('a "b"', "o'k", 'kLoop')
    """
    if len(text) < 2 or text[0] != text[-1] or text[0] not in "\"'":
        return text
    try:
        return json.loads(text) if text[0] == '"' else _unescape(text[1:-1])
    except json.JSONDecodeError:
        return _unescape(text[1:-1])


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[1]), text)


def open_brackets(text: str) -> int:
    """The brackets ``text`` leaves open (outside quotes): positive while
    an instruction written over several lines goes on."""
    level = 0
    for _, _, level in unquoted_chars(text):  # noqa: B007 (the last one)
        continue
    return level


def without_line_comment(text: str) -> str:
    """``text`` up to a ``//`` comment outside quotes (XLA's lexer skips
    the rest of the line)."""
    slash = -2  # where the last "/" outside quotes was
    for at, char, _ in unquoted_chars(text):
        if char == "/":
            if slash == at - 1:
                return text[:slash].rstrip()
            slash = at
    return text

"""Characters that read differently to the gate and to the engine are refused.

sqlglot and each engine disagree about which characters separate words: U+200B ZERO WIDTH SPACE
is part of a name to sqlglot but whitespace to DuckDB, so `SELECT <U+200B>current_setting(...)`
is an unknown harmless function to the gate and a system call to the engine. Rather than list
what each engine treats as whitespace, every invisible, format, control or non-ASCII space
character is refused outside string literals (in keywords, names, comments and the space
between them) and in quoted identifiers, where it would make one name look like another. String
literals keep them: there they are data, and a person may need to match one. Only control
characters (other than tab, line feed and carriage return) and unpaired surrogates are refused
everywhere: no engine reads them the same way, and some drivers cut the text at a NUL.

Where a character sits is decided with the target dialect's own sqlglot tokenizer. Text it
cannot tokenize is checked as if nothing were quoted (fail closed).
"""

from __future__ import annotations

import bisect
import re
import unicodedata

import sqlglot
from sqlglot.tokens import Token, TokenType

from agent.gate.errors import Rejection
from agent.gate.verdict import Reason

#: Categories refused outside string literals: format (Cf), separators other than the plain
#: space (Zs, Zl, Zp), controls (Cc), surrogates, private use and unassigned code points.
SUSPICIOUS_CATEGORIES = frozenset({"Cf", "Zs", "Zl", "Zp", "Cc", "Cs", "Co", "Cn"})
#: Refused even inside string literals.
ALWAYS_REFUSED_CATEGORIES = frozenset({"Cc", "Cs"})
#: The only whitespace allowed outside string literals (quoted identifiers allow the space only).
PLAIN_WHITESPACE = frozenset(" \t\n\r")

#: Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt) that are not
#: already in a refused category (combining grapheme joiner, Hangul fillers, variation
#: selectors, ...), and U+2800 BRAILLE PATTERN BLANK, which renders as a blank.
INVISIBLE_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)

#: Everything but printable ASCII and the plain space: only these are looked at.
_NOT_PLAIN = re.compile(r"[^\x20-\x7e]")

#: Names Python's unicodedata does not give (control characters have none).
CONTROL_NAMES = {
    0x00: "NULL",
    0x08: "BACKSPACE",
    0x0B: "LINE TABULATION",
    0x0C: "FORM FEED",
    0x1B: "ESCAPE",
    0x1C: "FILE SEPARATOR",
    0x1D: "GROUP SEPARATOR",
    0x1E: "RECORD SEPARATOR",
    0x1F: "UNIT SEPARATOR",
    0x7F: "DELETE",
    0x85: "NEXT LINE",
}

_STRING_TOKENS = frozenset(
    {
        TokenType.STRING,
        TokenType.NATIONAL_STRING,
        TokenType.NATIONAL_RAW_STRING,
        TokenType.RAW_STRING,
        TokenType.BYTE_STRING,
        TokenType.HEX_STRING,
        TokenType.BIT_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.UNICODE_STRING,
    }
)


def suspicious(char: str) -> bool:
    """True for a character refused outside string literals."""
    if char in PLAIN_WHITESPACE:
        return False
    if char.isascii() and char.isprintable():
        return False
    if unicodedata.category(char) in SUSPICIOUS_CATEGORIES:
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in INVISIBLE_RANGES)


def describe(char: str) -> str:
    """`U+200B ZERO WIDTH SPACE`: the code point and its name, as a person can look it up."""
    code = ord(char)
    name = unicodedata.name(char, "") or CONTROL_NAMES.get(code, "")
    if not name:
        name = {"Cc": "(a control character)", "Cs": "(an unpaired surrogate)"}.get(
            unicodedata.category(char), "(an unassigned or private-use character)"
        )
    return f"U+{code:04X} {name}"


def check_characters(text: str, tokens: list[Token] | None) -> None:
    """Raise `Rejection` naming the first character of `text` engines may read differently.

    `tokens` are `text`'s tokens in the target dialect (None when it could not be tokenized).
    """
    candidates = [m.start() for m in _NOT_PLAIN.finditer(text)]
    if not candidates:
        return  # printable ASCII and spaces only: the common case
    spans = _quoted_spans(tokens or [])
    places = {i: _place(i, spans) for i in candidates}
    found = [i for i in candidates if _refused(text[i], places[i])]
    if not found:
        return
    at = found[0]
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    more = f" ({len(found) - 1} more after it)" if len(found) > 1 else ""
    message = f"{describe(text[at])} at line {line}, column {column}{more}: {_WHY[places[at]]}"
    raise Rejection(Reason("invisible_character", message, span=(at, at + 1)), sql=text)


_WHY = {
    "": (
        "invisible, control and non-ASCII space characters are not allowed outside quoted "
        "text, because the database may read them differently from the checks; retype the "
        "statement with plain spaces"
    ),
    "identifier": (
        "invisible, control and non-ASCII space characters are not allowed in quoted names, "
        "where they make one name look like another; retype the name"
    ),
    "string": "control characters are not allowed, even in strings; remove it",
}


def tokenize(text: str, dialect: str) -> list[Token] | None:
    """`text`'s tokens in `dialect`, or None when the tokenizer fails on it."""
    try:
        return sqlglot.tokenize(text, read=dialect)
    except Exception:  # an unterminated string or comment: the parser will say so
        return None


def _refused(char: str, inside: str) -> bool:
    if inside == "string":
        return unicodedata.category(char) in ALWAYS_REFUSED_CATEGORIES and char not in "\t\n\r"
    if inside == "identifier" and char in "\t\n\r":
        return True
    return suspicious(char)


def _quoted_spans(tokens: list[Token]) -> list[tuple[int, int, str]]:
    """(start, end, "string" or "identifier") of each quoted token, quotes included, in order."""
    spans = []
    for token in tokens:
        if token.token_type in _STRING_TOKENS:
            spans.append((token.start, token.end, "string"))
        elif token.token_type == TokenType.IDENTIFIER:
            spans.append((token.start, token.end, "identifier"))
    return spans


def _place(at: int, spans: list[tuple[int, int, str]]) -> str:
    """The kind of quoted token holding position `at`, or "" outside them."""
    index = bisect.bisect_right(spans, at, key=lambda span: span[0]) - 1
    if index >= 0 and spans[index][0] <= at <= spans[index][1]:
        return spans[index][2]
    return ""

"""Is a message SQL a person pasted, or a question in words?

The parser decides first: the message (or the code blocks that are the whole message) must parse,
in the warehouse's dialect or a neighbour the gate would transpile from, as one or more
statements of any kind: queries, writes, DDL, several at once. Parsing alone lets prose through,
as sqlglot is lenient: `total sales` parses as a column with an alias, `show me revenue` as a
statement it keeps as text (a Command), `select all orders from last week` as a query of the
table `last`. So what parses must also read as code, not prose:

- every statement is a statement, not a bare expression (`revenue`, `total sales`);
- a Command counts only when what follows its keyword is SQL too (`EXPLAIN SELECT ...`), or has
  code's punctuation and no English words (`CALL refresh()`; not `show me revenue`);
- no unquoted name in it is an English word no schema uses for a name (`me`, `the`, `please`,
  `what`, `last`: `select all orders from last week`);
- a SELECT without FROM reads no columns (`select revenue`, `select region, revenue`);
- it does not end with a `?` (SQL's placeholder, and the end of most questions);
- it has a mark of code: a symbol, a number, quoted text, or at least two keywords
  (`DROP TABLE orders` is SQL; `describe orders`, `analyze churn` are requests in words).

What is not recognised goes to the model as a question, so a doubtful message costs a model call,
never a refusal of something the person did not mean as SQL.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from agent.gate.parse import NEIGHBOURS

#: Names no schema gives a table or column, and prose is full of.
ENGLISH = frozenset(
    {
        "the",
        "me",
        "my",
        "mine",
        "our",
        "ours",
        "your",
        "yours",
        "us",
        "we",
        "you",
        "please",
        "thanks",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "how",
        "this",
        "these",
        "those",
        "that",
    }
)

#: Also English as a table's name or alias (`from last week`, `from march`), though a column
#: may be so named.
TIME_WORDS = frozenset(
    {"last", "next", "past", "previous", "today", "yesterday", "tomorrow"}
    | {"january", "february", "march", "april", "may", "june", "july", "august"}
    | {"september", "october", "november", "december"}
)

#: Also English in the text after a Command's keyword, outside quotes: sqlglot did not read it as
#: SQL, so small words are enough to call it prose.
COMMAND_ENGLISH = (
    ENGLISH
    | TIME_WORDS
    | {"a", "an", "of", "about", "for", "by", "per", "in", "and", "with", "to", "from"}
    | {"all", "some", "each", "every", "can", "could", "would", "should"}
)

#: Punctuation that marks the text after a Command's keyword as code (not `,` or `.`: prose
#: has them too).
COMMAND_PUNCTUATION = frozenset("()=;*'\"`<>")

_FENCE = re.compile(r"```(.*?)(?:```|\Z)", re.DOTALL)
#: A fenced block's language tag (```sql), on its own line or before the code.
_TAG = re.compile(
    r"\A(?:sql|postgres(?:ql)?|pgsql|mysql|sqlite|duckdb|bigquery|googlesql)\b[ \t]*\n?",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d]\w*(?:\s+[^\W\d]\w*)*")  # a word, or a keyword of words (ORDER BY)
_QUOTED = frozenset(t for t in TokenType if "STRING" in t.name) | {TokenType.IDENTIFIER}


def pasted_sql(text: str, dialect: str) -> str | None:
    """The SQL `text` holds when it is SQL (without the code fences around it), else None."""
    code = unwrapped(text)
    if not code:
        return None
    return code if _is_sql(code, dialect, depth=0) else None


def unwrapped(text: str) -> str | None:
    """The code in `text`: the text itself; the blocks of a message made only of ``` fences
    (several blocks are several statements); or the inside of one `inline` span. None when
    words surround a code block: that is a question about SQL, for the model."""
    text = text.strip()
    if "```" in text:
        if _FENCE.sub("", text).strip():
            return None
        blocks = (_TAG.sub("", block.strip(), count=1).strip() for block in _FENCE.findall(text))
        return ";\n".join(block for block in blocks if block)
    if len(text) > 2 and text[0] == text[-1] == "`" and "`" not in text[1:-1]:
        return _TAG.sub("", text[1:-1].strip(), count=1).strip()
    return text


def _is_sql(code: str, dialect: str, depth: int) -> bool:
    parsed = _parse(code, dialect)
    if parsed is None:
        return False
    trees, tokens, read = parsed
    if tokens[-1].token_type == TokenType.PLACEHOLDER:
        return False
    keywords = marks = 0
    for token in tokens:
        if token.token_type in _QUOTED or not _WORD.fullmatch(token.text):
            marks += 1
        elif token.token_type != TokenType.VAR:
            keywords += 1
    if not marks and keywords < 2:
        return False
    return all(_reads_as_code(tree, read, depth) for tree in trees)


def _reads_as_code(tree: exp.Expr, dialect: str, depth: int) -> bool:
    """One parsed statement is a statement, not prose that happened to parse."""
    if isinstance(tree, exp.Command):
        return _command_is_sql(tree, dialect, depth)
    if isinstance(tree, exp.Condition | exp.Alias | exp.Identifier | exp.Star | exp.Tuple):
        return False  # an expression, not a statement: `revenue`, `total sales`
    names = {i.name.lower() for i in tree.find_all(exp.Identifier) if not i.quoted}
    tables = {t.name.lower() for t in tree.find_all(exp.Table)} | {
        t.alias.lower() for t in tree.find_all(exp.Table) if t.alias
    }
    if names & ENGLISH or tables & TIME_WORDS:
        return False
    if isinstance(tree, exp.Query) and tree.find(exp.From) is None:
        # columns with nothing to read them from: `select revenue`, `select * please`
        selects = tree.selects if isinstance(tree, exp.Select) else []
        if tree.find(exp.Column) or any(isinstance(s.unalias(), exp.Star) for s in selects):
            return False
    return True


def _command_is_sql(tree: exp.Command, dialect: str, depth: int) -> bool:
    """sqlglot kept the statement as text after its keyword (`EXPLAIN ...`, `CALL ...`,
    and prose such as `show me revenue`): SQL when that text is SQL, or looks like code."""
    rest = tree.args.get("expression") or ""
    rest = rest if isinstance(rest, str) else rest.name
    if not rest.strip():
        return True
    # the statement it introduces, after an option word or not (`EXPLAIN ANALYZE SELECT ...`)
    after_option = rest.split(None, 1)[1:]
    if depth < 2 and any(_is_sql(r, dialect, depth + 1) for r in [rest, *after_option]):
        return True
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", " ", rest)
    words = {w.lower() for w in re.findall(r"[^\W\d]\w*", unquoted)}
    return bool(COMMAND_PUNCTUATION & set(rest)) and not words & COMMAND_ENGLISH


def _parse(code: str, dialect: str) -> tuple[list[exp.Expr], list[Token], str] | None:
    """The statements of `code` and its tokens, in the first of the dialect and its neighbours
    that reads it whole; None when none does."""
    for read in (dialect, *NEIGHBOURS.get(dialect, ())):
        try:
            with _quiet():
                tokens = Dialect.get_or_raise(read).tokenize(code)
                trees = [t for t in sqlglot.parse(code, read=read) if t is not None]
        except Exception:  # a parse or token error, or a parser bug on odd text: not this one
            continue
        if trees and tokens:
            return trees, tokens, read
    return None


class _Quiet(logging.Filter):
    """Drops sqlglot's log records while this thread reads a message here: prose often parses as
    an unknown statement ("Falling back to parsing as a 'Command'"), which is no news for the
    log, and would copy the person's words into it."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(self.local, "on", False)


_QUIET = _Quiet()
logging.getLogger("sqlglot").addFilter(_QUIET)


@contextmanager
def _quiet() -> Iterator[None]:
    _QUIET.local.on = True
    try:
        yield
    finally:
        _QUIET.local.on = False

"""A draft that keeps one day where the question asks about a longer period.

Small models copy a period's first day, or today's date, into an equality: "How many customers
signed up in 2026?" becomes `signup_date = '2026-11-25'`, "revenue in March 2026" becomes
`order_date = DATE '2026-03-01'`. Both run and answer the wrong question. Code finds it from the
question's words (a year, a month name, "last quarter", with no day named) and the parsed SQL
(a column compared with `=` to one date), and the draft goes back to repair with the dialect's
way of writing a period; a person's own SQL is never held to it.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent.model import prompts

_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
)
#: A period longer than a day, as a question names it ("may" only with its year: it is a verb).
_PERIOD = re.compile(
    rf"\b(?:{_MONTH}\s+(?:19|20)\d\d|(?!may\b){_MONTH}|(?:19|20)\d\d|"
    r"(?:last|this|previous|past|current)\s+(?:week|month|quarter|year)|q[1-4])\b",
    re.IGNORECASE,
)
#: Words that name a single day, where an equality on a date is right.
_DAY = re.compile(
    rf"\b(?:day|days|today|yesterday|tomorrow|date|on\s+{_MONTH}\s+\d|{_MONTH}\s+\d{{1,2}}\b"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH})|\b\d{{4}}-\d{{2}}-\d{{2}}\b",
    re.IGNORECASE,
)
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]00:00(?::00)?)?$")


def named_period(question: str) -> str | None:
    """The longer-than-a-day period `question` names ("2026", "March 2026", "last quarter"),
    or None when it names none, or names a day too."""
    if _DAY.search(question):
        return None
    found = _PERIOD.search(question)
    return found.group(0) if found else None


def _one_day(node: exp.Expr) -> bool:
    """Whether `node` is a single date: a 'YYYY-MM-DD' literal (cast or typed, or not), or the
    current date."""
    while isinstance(node, (exp.Cast, exp.TryCast)):
        node = node.this
    if isinstance(node, (exp.CurrentDate, exp.CurrentTimestamp)):
        return True
    return isinstance(node, exp.Literal) and node.is_string and bool(_ISO_DAY.match(node.this))


def one_day_filters(sql: str, dialect: str) -> list[str]:
    """Each `column = <one date>` condition of `sql`, as written in `dialect`."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return []
    found = []
    for node in tree.find_all(exp.EQ):
        left, right = node.left, node.right
        if (isinstance(left, exp.Column) and _one_day(right)) or (
            isinstance(right, exp.Column) and _one_day(left)
        ):
            found.append(node.sql(dialect))
    return found


def period_problems(question: str, sql: str, dialect: str) -> list[str]:
    """Why `sql` does not answer the period `question` names (empty when it does, or when the
    question names no period)."""
    period = named_period(question)
    if period is None:
        return []
    idioms = prompts.DATE_IDIOMS.get(dialect)
    how = f" (in this dialect: {idioms})" if idioms else ""
    return [
        f"`{condition}` keeps one day, but the question asks about {period}: filter the whole "
        f"period instead{how}"
        for condition in one_day_filters(sql, dialect)
    ]

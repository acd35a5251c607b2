"""How a result's values read, the one way Slack's tables, one-row answers, charts and the
terminal show them.

A column's form is decided once, from its name and its values (`column_form`), then each value is
written in it (`cell_text`):

- an integer column named as an identifier or a year (`id`, `order_id`, `customerid`,
  `CustomerId`, `sku_key`, `zip_code`, `invoice_number`, `order_no`, `year`, `fiscal_year`)
  shows plain digits (`100001`, `2026`); other numbers, the measures, keep thousands separators;
- dates and times arrive as ISO text (`agent.nodes.execute.plain`): a column of midnights shows
  dates (`2026-08-01`), a column that is clearly months (named `month` or `*_month`, or at least
  two values that are all first-of-month midnights, as `date_trunc('month', …)` returns) shows
  `2026-08` (as charts label months), and any other time shows `2026-08-01 13:45:00`, without
  the `T`. The decision is made for the whole column, so its values agree.

The CSV file keeps the values as the warehouse returned them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Literal

Form = Literal["plain", "identifier", "date", "month", "timestamp"]

#: The last word of an identifier's name (`order_id`, `OrderKey`, `zip code`, `fiscal_year`).
_IDENTIFIER_WORDS = frozenset({"id", "key", "code", "number", "no", "year"})
#: Words that end in "id" but name no identifier (`amount_paid`, `is_valid`, `bid`).
_NOT_IDS = frozenset(
    str.split(
        "paid unpaid prepaid overpaid underpaid repaid valid invalid void avoid grid fluid hybrid "
        "rapid liquid solid acid humid vivid rigid timid lucid candid splendid placid tepid stupid "
        "pyramid orchid druid android squid covid said laid raid maid aid bid kid lid mid rid did "
        "hid skid amid"
    )
)
_PLAIN_NAME = re.compile(r"[\w $]+")
#: The words of a name: `customerId` -> customer, Id; `ORDER_NO` -> ORDER, NO.
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
#: An ISO date, maybe with a time (`T` or a space between) and an offset.
_ISO = re.compile(
    r"(?P<date>\d{4}-\d{2}-(?P<day>\d{2}))"
    r"(?:[T ](?P<time>\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(?P<zone>Z|[+-]\d{2}(?::?\d{2})?)?)?"
)
_MIDNIGHT = re.compile(r"00:00(?::00(?:\.0+)?)?")


def identifier_name(name: str) -> bool:
    """Whether a column called `name` holds identifiers or years rather than amounts: its last
    word is one of `_IDENTIFIER_WORDS`, or a run-together name ending in "id" (`customerid`)
    that is not an English word (`paid`, `valid`). An expression (`count(order_id)`) counts, so it
    is not one; a qualified name (`orders.id`, as Looker names fields) is read by its last part."""
    last_part = name.rsplit(".", 1)[-1]
    if not _PLAIN_NAME.fullmatch(last_part):
        return False
    words = _WORDS.findall(last_part)
    if not words:
        return False
    last = words[-1].lower()
    if last in _IDENTIFIER_WORDS:
        return len(words) > 1 or last not in ("number", "no")  # `number` alone may be a count
    return len(last) > 2 and last.endswith("id") and last not in _NOT_IDS


def _month_name(name: str) -> bool:
    words = _WORDS.findall(name)
    return bool(words) and words[-1].lower() == "month"


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _midnight(found: re.Match[str]) -> bool:
    return found["time"] is None or bool(_MIDNIGHT.fullmatch(found["time"]))


def column_form(name: str, values: Sequence[Any]) -> Form:
    """How the column `name` holding `values` is shown (see the module's docstring)."""
    present = [v for v in values if v is not None]
    if not present:
        return "plain"
    if all(_integer(v) for v in present):
        return "identifier" if identifier_name(name) else "plain"
    if not all(isinstance(v, str) for v in present):
        return "plain"
    moments = [_ISO.fullmatch(v.strip()) for v in present]
    if not all(moments):
        return "plain"
    found = [m for m in moments if m]
    if not all(_midnight(m) for m in found):
        return "timestamp"
    firsts = all(m["day"] == "01" for m in found)
    if firsts and (_month_name(name) or len({m["date"] for m in found}) >= 2):
        return "month"
    return "date"


def cell_text(value: Any, form: Form = "plain") -> str:
    """One value as shown: NULL for None, `true`/`false`, numbers with thousands separators
    (two decimals, or three significant digits under 0.01), plain digits for an identifier,
    dates and times in `form`, "(empty)" for empty text."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value) if form == "identifier" else f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:,.2f}" if value == 0 or abs(value) >= 0.01 else f"{value:.3g}"
    text = str(value)
    if form in ("date", "month", "timestamp") and (found := _ISO.fullmatch(text.strip())):
        if form == "month":
            return found["date"][:7]
        if form == "date":
            return found["date"]
        return text.strip().replace("T", " ", 1)
    return text if text else "(empty)"


def column_forms(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[Form]:
    """Each column's form, decided from its name and its values in `rows`."""
    return [column_form(c, [row[i] for row in rows]) for i, c in enumerate(columns)]


def result_cells(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[list[str]]:
    """`rows` as shown, each value in its column's form."""
    forms = column_forms(columns, rows)
    return [[cell_text(v, f) for v, f in zip(row, forms, strict=True)] for row in rows]

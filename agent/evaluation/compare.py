"""Result comparison as defog's sql-eval does it, on plain rows instead of DataFrames.

Two results match *exactly* when they have the same shape and the same rows once their columns
are paired by content (names and column order do not matter: models name columns freely). The
generated result is a *subset* match when it has at least the gold columns, with the same rows
once projected onto them (extra columns are fine). Duplicate rows are dropped and rows are
compared as a set unless the question asks for an order. Numbers compare rounded to 2 decimals
(so a share computed as DECIMAL or DOUBLE matches) and dates as ISO text.

When order matters, rows tied on the sort key may come in any order (engines differ), so the
rows must match as a set and the gold result's sort column (a column sorted in the gold rows,
with at least two values) must run in the same sequence; with no such column, the whole row
sequence must be equal.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from connectors.units import counted

Match = Literal["exact", "subset"]
Row = tuple[Any, ...]


@dataclass(frozen=True)
class Table:
    """A result: column names and every row."""

    columns: tuple[str, ...]
    rows: tuple[Row, ...]


def norm(value: Any) -> Any:
    """One value in a form that compares equal across engines and types."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float | decimal.Decimal):
        number = round(float(value), 2)
        return 0.0 if number == 0 else number  # -0.0 and 0.0 are one value
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    text = str(value)
    # a midnight timestamp and a date are one value (engines truncate dates to either)
    return text.removesuffix("T00:00:00").removesuffix(" 00:00:00")


def _key(value: Any) -> tuple[int, str]:
    """A sort key that orders None, numbers and text without comparing across types."""
    return (0, "") if value is None else (1, repr(value))


def _rows(rows: Sequence[Row]) -> list[Row]:
    """Deduplicated rows in a canonical order."""
    return sorted(dict.fromkeys(rows), key=lambda r: [_key(v) for v in r])


def _sort_columns(rows: Sequence[Row]) -> list[int]:
    """Columns whose values are sorted (either way) down `rows`, with at least two values."""
    found = []
    for i in range(len(rows[0]) if rows else 0):
        values = [row[i] for row in rows]
        if None in values or len(set(values)) < 2:
            continue
        try:
            if values in (sorted(values), sorted(values, reverse=True)):
                found.append(i)
        except TypeError:  # mixed types cannot be a sort key
            continue
    return found


def _same_order(gold: Sequence[Row], gen: Sequence[Row]) -> bool:
    keys = _sort_columns(gold)
    if not keys:
        return list(dict.fromkeys(gold)) == list(dict.fromkeys(gen))
    return any([r[k] for r in gold] == [r[k] for r in gen] for k in keys)


def _column(table: Table, index: int) -> list[Any]:
    return [row[index] for row in table.rows]


def _pairings(gold: Table, gen: Table) -> list[list[int]]:
    """Every way to give each gold column a distinct generated column holding the same values.

    Candidates are filtered on the column's sorted values first, so the search stays tiny.
    """
    sigs = [sorted(set(_column(gen, j)), key=_key) for j in range(len(gen.columns))]
    candidates = []
    for i in range(len(gold.columns)):
        want = sorted(set(_column(gold, i)), key=_key)
        candidates.append([j for j, sig in enumerate(sigs) if sig == want])
    found: list[list[int]] = []

    def extend(chosen: list[int]) -> None:
        if len(found) >= 64:
            return
        if len(chosen) == len(candidates):
            found.append(list(chosen))
            return
        for j in candidates[len(chosen)]:
            if j not in chosen:
                extend([*chosen, j])

    extend([])
    return found


def normalise(table: Table) -> Table:
    return Table(table.columns, tuple(tuple(norm(v) for v in row) for row in table.rows))


def compare(gold: Table, gen: Table, *, ordered: bool) -> Match | None:
    """`exact`, `subset` or None (no match) for one gold result."""
    gold, gen = normalise(gold), normalise(gen)
    want = _rows(gold.rows)
    if not gold.rows and not gen.rows:
        # Both empty: only the columns can differ; sql-eval calls this a match.
        return "exact" if len(gold.columns) == len(gen.columns) else "subset"
    for pairing in _pairings(gold, gen):
        projected = [tuple(row[j] for j in pairing) for row in gen.rows]
        if _rows(projected) != want or (ordered and not _same_order(gold.rows, projected)):
            continue
        same_shape = len(gen.columns) == len(gold.columns)
        rows_kept = len(_rows(gen.rows)) == len(want)
        return "exact" if same_shape and rows_kept else "subset"
    return None


def best_match(golds: Sequence[Table], gen: Table, *, ordered: bool) -> Match | None:
    """The best match of `gen` against any acceptable gold result."""
    results = [compare(gold, gen, ordered=ordered) for gold in golds]
    if "exact" in results:
        return "exact"
    return "subset" if "subset" in results else None


def difference(golds: Sequence[Table], gen: Table) -> str:
    """A short reason why `gen` matches no gold result, for the failure list."""
    gold = golds[0]
    if len(gen.rows) != len(gold.rows):
        return f"{counted(len(gen.rows), 'row')} where the gold answer has {len(gold.rows)}"
    if len(gen.columns) < len(gold.columns):
        return (
            f"{counted(len(gen.columns), 'column')} ({', '.join(gen.columns)}) where the gold "
            f"answer has {len(gold.columns)} ({', '.join(gold.columns)})"
        )
    return "the values differ from the gold answer"

"""What a scheduled run's result says against the last run: the figures kept for the next run,
the change since the last one, and whether an alert fires, stays quiet, or clears.

Pure functions over plain values: the figure a run is judged by is the first number of its
first row (a count, a sum), and the number of rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.outcome import Answer
from bot.schedules.records import Alert
from connectors.units import counted

ABOVE, BELOW, CHANGE, ROWS_APPEAR, ROWS_DISAPPEAR = (
    "above",
    "below",
    "change",
    "rows_appear",
    "rows_disappear",
)
KINDS = (ABOVE, BELOW, CHANGE, ROWS_APPEAR, ROWS_DISAPPEAR)


def figures(answer: Answer) -> dict[str, Any]:
    """What the next run compares with: the first number of the first row (None when there is
    none) and how many rows there were."""
    value = None
    if answer.rows:
        value = next(
            (v for v in answer.rows[0] if isinstance(v, int | float) and not isinstance(v, bool)),
            None,
        )
    return {"value": value, "rows": answer.total_rows}


def change_since(last: dict[str, Any], now: dict[str, Any]) -> str:
    """The change since the last run, in words ("" for a first run, or nothing to compare)."""
    if not last:
        return ""
    before, after = last.get("value"), now.get("value")
    if isinstance(before, int | float) and isinstance(after, int | float):
        if before == after:
            return f"Unchanged since the last run ({_number(after)})."
        moved = f"{_number(before)} → {_number(after)}"
        if before:
            percent = (after - before) / abs(before) * 100
            return f"{percent:+.1f}% since the last run ({moved})."
        return f"Changed since the last run ({moved})."
    if last.get("rows") != now.get("rows"):
        return (
            f"{last.get('rows')} → {counted(int(now.get('rows') or 0), 'row')} since the last run."
        )
    return ""


@dataclass(frozen=True)
class Verdict:
    """What an alert makes of a run: `post` it (it fired, or cleared), and why, in words;
    `firing` is kept for the next run."""

    post: bool
    firing: bool
    why: str = ""


def judge(alert: Alert, last: dict[str, Any], now: dict[str, Any]) -> Verdict:
    """Whether `alert` fires on `now` (after `last`, the previous run's figures): a run posts
    when the alert starts firing and once when it clears; otherwise it stays quiet."""
    fires, what = _fires(alert, last, now)
    was = bool(last.get("firing"))
    if fires and not was:
        return Verdict(True, True, f"Alert: {what}.")
    if was and not fires:
        return Verdict(True, False, f"Cleared: {_cleared(alert, now)}.")
    return Verdict(False, fires)


def _fires(alert: Alert, last: dict[str, Any], now: dict[str, Any]) -> tuple[bool, str]:
    value, before = _float(now.get("value")), _float(last.get("value"))
    rows = int(now.get("rows") or 0)
    if alert.kind in (ABOVE, BELOW):
        if value is None:
            return False, ""
        above = alert.kind == ABOVE
        fires = value > alert.threshold if above else value < alert.threshold
        return fires, f"{_number(value)} is {alert.kind} {_number(alert.threshold)}"
    if alert.kind == CHANGE:
        if value is None or not before:
            return False, ""
        percent = (value - before) / abs(before) * 100
        moved = f"{_number(before)} → {_number(value)}"
        return abs(percent) > alert.threshold, f"it moved {percent:+.1f}% ({moved})"
    if alert.kind == ROWS_APPEAR:
        return rows > 0, f"{counted(rows, 'row')} appeared"
    if alert.kind == ROWS_DISAPPEAR:
        return rows == 0 and int(last.get("rows") or 0) > 0, "the rows are gone"
    raise ValueError(f"unknown alert kind {alert.kind!r}")


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _cleared(alert: Alert, now: dict[str, Any]) -> str:
    if alert.kind in (ROWS_APPEAR, ROWS_DISAPPEAR):
        return f"{counted(int(now.get('rows') or 0), 'row')} now"
    return f"{_number(now.get('value'))} now"


def describe(alert: Alert) -> str:
    """The alert's condition in words."""
    words = {
        ABOVE: f"when the value is above {_number(alert.threshold)}",
        BELOW: f"when the value is below {_number(alert.threshold)}",
        CHANGE: f"when the value moves by more than {_number(alert.threshold)}%",
        ROWS_APPEAR: "when rows appear",
        ROWS_DISAPPEAR: "when the rows disappear",
    }
    return words[alert.kind]


def _number(value: Any) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    if isinstance(value, int | float):
        return f"{int(value):,}"
    return "no value"

"""A result's chart as Slack's native `data_visualization` block: nothing to render or upload.

slack_sdk 3.47 does not model the block (Slack added it on 2026-06-16), so it is built as a dict
and its limits are kept here. From Slack's reference page
(https://docs.slack.dev/reference/block-kit/blocks/data-visualization-block): `title` at most 50
characters; `chart` is a `pie` of 1 to 6 `segments` (`label` at most 20 characters, `value`
above 0) or a `bar`, `area` or `line` chart of 1 to 6 `series` sharing an `axis_config`. The copy
of that page we could read stops at the series' own fields; for those this follows the
slack-messaging crate's reading of the same page: a series has a `name` of at most 20
characters and `data`, 1 to 20 points of `{label, value}` whose labels are the axis
`categories` (each at most 20 characters); `axis_config` may add an `x_label` and a `y_label`
of at most 50 characters.

Which chart (the answers `bot.blocks.attachments.chart_kind` finds a chart for):
- a time series: a line, one series per numeric column (the first six, as the PNG draws),
  the points in time order, labelled as precisely as the data needs (`2026-03`, `2026-03-14`,
  `2026-03-14 09:30`);
- a category breakdown: a pie when its rows are parts of a whole, else bars. Parts of a whole
  means: 2 to 6 rows, every value above 0, the whole result, and the value column is a `SUM`
  or `COUNT` (not `COUNT(DISTINCT ...)`, which may count a thing in several rows) in the
  query's outer `SELECT`, whose `LIMIT`, if any, left no row out: fewer rows came back than it
  allows (the gate's row cap usually leaves none out; a top 5 is not a whole).
  An average, a ratio, a price or a top-N list gets bars, whose heights mean what they say.

What does not fit gets no block (`chart` returns None) and the bot sends the PNG instead:
more than 20 points (summing neighbours would be wrong for an average, and dropping points
would hide data), or a missing (NULL) value, which a native chart cannot leave out.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

from agent.gate.limit import literal_count
from agent.outcome import Answer
from bot.blocks.attachments import SERIES, chart_kind, moment
from bot.blocks.base import FALLBACK_TEXT, Message, cut, escaped
from bot.cells import result_cells
from bot.words import label

TITLE = 50
#: A segment, series name, data point or category label.
LABEL = 20
#: x_label and y_label.
AXIS_LABEL = 50
#: Points a series holds (one per category).
POINTS = 20
#: Segments of a pie.
SEGMENTS = 6


def chart(answer: Answer) -> Message | None:
    """The answer's chart as a message holding one `data_visualization` block; None when the
    answer has no chart or its data does not fit the block (see the module's docstring)."""
    kind = chart_kind(answer)
    if kind is None or len(answer.rows) > POINTS:
        return None
    values = _values(answer)
    if values is None:
        return None
    columns = answer.columns
    if kind == "time":
        order = sorted(range(len(answer.rows)), key=lambda i: _when(answer.rows[i][0]))
        categories = _unique(_time_labels([_when(answer.rows[i][0]) for i in order]))
        series = [[column[i] for i in order] for column in values]
        body = _xy("line", columns, categories, series)
    else:
        firsts = result_cells(columns[:1], [row[:1] for row in answer.rows])
        labels = _unique([cells[0] for cells in firsts])
        [amounts] = values
        if _parts_of_a_whole(answer, amounts):
            segments = [{"label": x, "value": v} for x, v in zip(labels, amounts, strict=True)]
            body = {"type": "pie", "segments": segments}
        else:
            body = _xy("bar", columns, labels, values)
    title = _title(answer.explanation)
    block = {"type": "data_visualization", "title": title, "chart": body}
    return Message(text=escaped(f"Chart: {title}", FALLBACK_TEXT), blocks=[block])


def _values(answer: Answer) -> list[list[int | float]] | None:
    """The charted numeric columns (the first SERIES after the first column), each a list of
    finite numbers; None when a value is missing or not finite."""
    last = min(len(answer.columns), SERIES + 1)
    columns = [[row[i] for row in answer.rows] for i in range(1, last)]
    for column in columns:
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in column):
            return None
    return columns


def _when(value: Any) -> dt.datetime:
    found = moment(value)
    assert found is not None  # chart_kind found every first value a moment
    return found


def _time_labels(moments: list[dt.datetime]) -> list[str]:
    """The moments written as precisely as the finest of them needs (all at most 19 characters)."""
    if any(m.second or m.microsecond for m in moments):
        form = "%Y-%m-%d %H:%M:%S"
    elif any(m.hour or m.minute for m in moments):
        form = "%Y-%m-%d %H:%M"
    elif any(m.day != 1 for m in moments):
        form = "%Y-%m-%d"
    elif any(m.month != 1 for m in moments):
        form = "%Y-%m"
    else:
        form = "%Y"
    return [m.strftime(form) for m in moments]


def _unique(texts: list[str]) -> list[str]:
    """Each text cut to LABEL characters, a repeat marked " (2)", " (3)"...: a data point names
    its category by label, so two equal labels would be one category."""
    seen: set[str] = set()
    labels = []
    for text in texts:
        label = cut(text, LABEL)
        repeat = 2
        while label in seen:
            suffix = f" ({repeat})"
            label = cut(text, LABEL - len(suffix)) + suffix
            repeat += 1
        seen.add(label)
        labels.append(label)
    return labels


def _xy(
    kind: str, columns: list[str], categories: list[str], series: list[list[int | float]]
) -> dict[str, Any]:
    """A bar, area or line chart: one series per value column over shared categories."""
    heads = [label(c) for c in columns]  # `count_star()` reads "Count"
    names = _unique(heads[1 : len(series) + 1])
    axis: dict[str, Any] = {"categories": categories}
    if columns[0]:
        axis["x_label"] = cut(heads[0], AXIS_LABEL)
    if len(series) == 1 and columns[1]:
        axis["y_label"] = cut(heads[1], AXIS_LABEL)
    return {
        "type": kind,
        "series": [
            {
                "name": name,
                "data": [{"label": c, "value": v} for c, v in zip(categories, values, strict=True)],
            }
            for name, values in zip(names, series, strict=True)
        ],
        "axis_config": axis,
    }


def _parts_of_a_whole(answer: Answer, values: list[int | float]) -> bool:
    """Whether a category breakdown may be a pie (see the module's docstring)."""
    if not 2 <= len(values) <= SEGMENTS or any(v <= 0 for v in values):
        return False
    if answer.capped or answer.total_rows != len(answer.rows):
        return False
    try:
        tree = sqlglot.parse_one(
            answer.sql, read=answer.connector if Dialect.get(answer.connector) else None
        )
    except SqlglotError:
        return False
    if not isinstance(tree, exp.Select) or tree.args.get("offset"):
        return False
    if (limit := tree.args.get("limit")) is not None:
        count = literal_count(limit)
        if count is None or len(values) >= count:
            return False
    if len(tree.expressions) < 2:
        return False
    value = tree.expressions[1].unalias()
    if isinstance(value, exp.Count):
        return not isinstance(value.this, exp.Distinct)
    return isinstance(value, exp.Sum)


def _title(explanation: str) -> str:
    return cut(re.sub(r"\s+", " ", explanation).strip(), TITLE) or "Result"

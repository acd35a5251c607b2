"""Files posted with a result: the rows as CSV when the message shows only some of them, and a
chart PNG when the result is a time series or a small category breakdown and Slack's native
chart block (`chart`) cannot show it: the data does not fit the block, or the workspace refused the
block (`Refusals`). And a statement too long for its message, as a `.sql` file (with a proposal or a
result).

Both are built from `Answer.rows`, which holds the rows the agent kept: the bot keeps the whole
capped result (`QUERYBOT_ROW_LIMIT` rows at most).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from agent.outcome import Answer
from bot.words import label
from connectors.units import counted

#: A category breakdown is charted only when it is this short.
CATEGORY_ROWS = 20
#: Numeric series drawn on one time chart.
SERIES = 6
#: Seconds a workspace that refused the native chart block gets PNG charts without asking again.
REFUSED_FOR_S = 3600.0

_MONTH = re.compile(r"\d{4}-\d{2}")


@dataclass(frozen=True)
class Attachment:
    filename: str
    title: str
    content: bytes


def csv_file(answer: Answer) -> Attachment:
    """The rows the answer holds, as UTF-8 CSV with a header row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(answer.columns)
    writer.writerows(["" if v is None else v for v in row] for row in answer.rows)
    kept = len(answer.rows)
    title = ("All " if kept >= answer.total_rows else "First ") + counted(kept, "row")
    return Attachment("result.csv", f"{title} (CSV)", out.getvalue().encode("utf-8"))


def sql_file(sql: str, filename: str, title: str) -> Attachment:
    """A statement too long for its message, in full: the very text approved and run."""
    return Attachment(filename, f"{title} ({len(sql):,} characters)", sql.encode("utf-8"))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def moment(value: Any) -> dt.datetime | None:
    """A date, month (`2026-10`) or timestamp written as text, else None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if _MONTH.fullmatch(text):
        text += "-01"
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def chart_kind(answer: Answer) -> Literal["time", "category"] | None:
    """`time` for a date/time first column and numeric others; `category` for a text column and
    one numeric column of at most CATEGORY_ROWS rows; else None."""
    rows, columns = answer.rows, answer.columns
    if len(rows) < 2 or len(columns) < 2:
        return None

    def numeric(i: int) -> bool:
        present = [r[i] for r in rows if r[i] is not None]
        return bool(present) and all(_number(v) for v in present)

    if all(moment(r[0]) for r in rows) and all(numeric(i) for i in range(1, len(columns))):
        return "time"
    if (
        len(columns) == 2
        and len(rows) <= CATEGORY_ROWS
        and all(isinstance(r[0], str) for r in rows)
        and numeric(1)
    ):
        return "category"
    return None


def chart_file(answer: Answer) -> Attachment | None:
    """A PNG chart of the answer when `chart_kind` finds one, else None."""
    kind = chart_kind(answer)
    if kind is None:
        return None
    # Imported here: matplotlib takes a moment to load and most answers need no chart.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 4.5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    if kind == "time":
        # chart_kind found a moment in every first column: the filter only narrows the type
        stamped = ((when, r) for r in answer.rows if (when := moment(r[0])) is not None)
        points = sorted(stamped, key=lambda p: p[0])
        xs = [p[0] for p in points]
        for i, name in list(enumerate(answer.columns))[1 : SERIES + 1]:
            # matplotlib plots datetimes through its date converter; its stubs take numbers only
            ys = [p[1][i] for p in points]
            axes.plot(xs, ys, marker="o", markersize=3, label=label(name))  # type: ignore[arg-type]
        if len(answer.columns) > 2:
            axes.legend()
        figure.autofmt_xdate()
    else:
        labels = [str(r[0]) for r in answer.rows]
        axes.barh(labels[::-1], [r[1] or 0 for r in answer.rows][::-1])
        axes.set_xlabel(label(answer.columns[1]))
    axes.grid(alpha=0.3)
    axes.set_title(answer.explanation.strip()[:80] or "Result", fontsize=10)
    figure.tight_layout()
    out = io.BytesIO()
    figure.savefig(out, format="png")
    return Attachment("chart.png", "Chart", out.getvalue())


#: The one thread that draws PNG charts (started on the first one).
_DRAWER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="querybot-chart")


def render_chart(answer: Answer) -> Attachment | None:
    """`chart_file` on the one thread that draws charts, waited for.

    matplotlib holds the interpreter lock while it draws (about 0.1 s of CPU a chart) and keeps
    its font cache per thread: drawn by the workers, several charts at once would each slow
    every other thread's work, and each worker would build its own cache.
    """
    if chart_kind(answer) is None:
        return None
    return _DRAWER.submit(chart_file, answer).result()


class Refusals:
    """Workspaces (team ids) that refused a block type lately, so that an answer there does not
    pay a refused call before its fallback; asked again after `refused_for_s`. Thread-safe."""

    def __init__(
        self,
        refused_for_s: float = REFUSED_FOR_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._refused_for_s = refused_for_s
        self._clock = clock
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def refused(self, team: str) -> bool:
        """Whether `team` refused the block less than `refused_for_s` ago."""
        with self._lock:
            return self._clock() < self._until.get(team, -float("inf"))

    def note(self, team: str) -> bool:
        """Remember that `team` refused the block now; True when this is news (not already
        remembered), so the caller logs it once a period."""
        with self._lock:
            now = self._clock()
            news = now >= self._until.get(team, -float("inf"))
            self._until[team] = now + self._refused_for_s
            return news

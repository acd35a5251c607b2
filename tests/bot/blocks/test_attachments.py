"""CSV and chart files built from an answer's rows."""

from __future__ import annotations

from typing import Any

import pytest

from agent.outcome import Answer
from bot.blocks.attachments import chart_file, chart_kind, csv_file


def answer(columns: list[str], rows: list[list[Any]], total: int | None = None) -> Answer:
    return Answer(
        question="q", sql="SELECT 1", explanation="Something.", tables=[], columns=columns,
        rows=rows, total_rows=len(rows) if total is None else total, capped=False,
        elapsed_s=0.1, connector="duckdb", approved_by="U1",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("columns", "rows", "kind"),
    [
        (["month", "n"], [["2026-01", 1], ["2026-02", 2.5]], "time"),
        (["day", "a", "b"], [["2026-01-01", 1, None], ["2026-01-02", 2, 3]], "time"),
        (["at", "n"], [["2026-01-01T10:00:00", 1], ["2026-01-01 11:00:00", 2]], "time"),
        (["region", "revenue"], [["EU", 1.0], ["US", 2.0]], "category"),
        (["region", "revenue"], [[f"R{i}", i] for i in range(21)], None),
        (["region", "revenue", "cost"], [["EU", 1, 2], ["US", 2, 3]], None),
        (["month", "label"], [["2026-01", "x"], ["2026-02", "y"]], None),
        (["n"], [[1], [2]], None),
        (["region", "revenue"], [["EU", 1.0]], None),
        (["flag", "n"], [[True, 1], [False, 2]], None),
    ],
)
def test_chart_kind(columns: list[str], rows: list[list[Any]], kind: str | None) -> None:
    assert chart_kind(answer(columns, rows)) == kind


@pytest.mark.slow
def test_chart_is_a_png() -> None:
    chart = chart_file(answer(["region", "revenue"], [["EU", 1.0], ["US", None]]))
    assert chart is not None and chart.content.startswith(b"\x89PNG")
    assert chart_file(answer(["n"], [[1], [2]])) is None


def test_csv_writes_nulls_empty_and_quotes_what_needs_it() -> None:
    file = csv_file(answer(["a", "b"], [[None, 'say "hi", ok'], [1.5, "ü"]], total=300))
    assert file.content.decode() == 'a,b\n,"say ""hi"", ok"\n1.5,ü\n'
    assert file.title == "First 2 rows (CSV)"

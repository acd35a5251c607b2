"""bot.blocks.results and charts: a result reads the same way in Slack's table, its monospaced
fallback, a one-row answer and a chart's labels (issue 38 item 5): identifiers without
separators, months and dates as dates, headers in words, and a footer that names no empty list
of tables."""

from __future__ import annotations

from bot import blocks
from tests.bot.blocks.test_answer_wording import answer as make
from tests.support.message_checks import sections, texts, valid

COLUMNS = ["order_id", "month", "customer_count", "revenue"]
ROWS = [
    [100001, "2026-08-01T00:00:00", 1234, 5678.5],
    [100002, "2026-09-01T00:00:00", 12, 0.5],
]


def test_the_table_block_shows_ids_plainly_months_as_months_and_headers_in_words() -> None:
    answer = make(COLUMNS, ROWS)
    message = valid(blocks.result(answer, display_rows=20))
    [table] = [b for b in message.blocks if b["type"] == "table"]
    cells = [[c["text"] for c in row] for row in table["rows"]]
    assert cells == [
        ["Order id", "Month", "Customer count", "Revenue"],
        ["100001", "2026-08", "1,234", "5,678.50"],
        ["100002", "2026-09", "12", "0.50"],
    ]


def test_the_monospaced_table_reads_the_same() -> None:
    answer = make(COLUMNS, ROWS)
    code = sections(valid(blocks.result(answer, display_rows=20, use_table=False)))[1]
    assert "Order id  Month    Customer count  Revenue" in code
    assert "100001    2026-08  1,234           5,678.50" in code
    assert "T00:00:00" not in code


def test_a_one_row_answer_shows_a_date_and_an_id_as_such() -> None:
    answer = make(["customer_id", "first_order"], [[100001, "2026-08-03T00:00:00"]])
    message = valid(blocks.result(answer, display_rows=20))
    assert sections(message)[0].startswith("Customer id: *100001*\nFirst order: *2026-08-03*")
    assert message.text.startswith("Customer id: 100001; First order: 2026-08-03")


def test_a_chart_names_its_axes_in_words_as_the_table_does() -> None:
    answer = make(["region_name", "orders"], [["North", 5], ["South", 7]], sql="SELECT 1")
    chart = blocks.chart(answer)
    assert chart is not None
    axis = chart.blocks[0]["chart"]["axis_config"]
    assert axis == {"categories": ["North", "South"], "x_label": "Region name", "y_label": "Orders"}


def test_a_result_that_reads_no_tables_says_so() -> None:
    answer = make(["a", "b"], [[1, 2], [3, 4]], tables=[])
    footer = valid(blocks.result(answer, display_rows=20)).blocks[-1]["elements"][0]["text"]
    assert footer.startswith("Sources: no tables · 2 rows")
    assert "Sources:  ·" not in texts(valid(blocks.result(answer, display_rows=20)))


def test_an_empty_period_says_which_dates_the_data_covers() -> None:
    covers = "The data covers 2024-11-01 to 2026-10-31 (orders.order_date)."
    answer = make(["total"], [], coverage=covers)
    summary = sections(valid(blocks.result(answer, display_rows=20)))[0]
    assert summary.splitlines()[1].startswith(":mag: ") and summary.splitlines()[1].endswith(covers)
    assert covers not in texts(valid(blocks.result(make(["total"], []), display_rows=20)))

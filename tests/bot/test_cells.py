"""bot.cells: one way a result value reads (issue 38 item 5). Identifiers and years show plain
digits, measures keep their separators; dates, months and times read as dates and times."""

from __future__ import annotations

from typing import Any

import pytest

from bot.cells import cell_text, column_form, identifier_name, result_cells


@pytest.mark.parametrize(
    "name",
    ["id", "ID", "order_id", "customerid", "CustomerId", "Order ID", "sku_key", "zip_code",
     "invoice_number", "order_no", "ORDER_NO", "year", "fiscal_year", "key", "orders.id"],
)  # fmt: skip
def test_names_of_identifiers_and_years(name: str) -> None:
    assert identifier_name(name)


@pytest.mark.parametrize(
    "name",
    ["orders", "count", "revenue", "amount_paid", "is_valid", "bid", "years", "number", "no",
     "n", "", "count(order_id)", "count(DISTINCT customer_id)"],
)  # fmt: skip
def test_names_of_measures(name: str) -> None:
    assert not identifier_name(name)


def test_an_integer_identifier_shows_plain_digits_and_a_measure_keeps_separators() -> None:
    rows = [[100001, 2026, 100001, 1234.5], [100002, 2025, 7, 0.5]]
    shown = result_cells(["order_id", "year", "orders", "revenue"], rows)
    assert shown == [["100001", "2026", "100,001", "1,234.50"], ["100002", "2025", "7", "0.50"]]


def test_an_identifier_name_on_text_or_floats_changes_nothing() -> None:
    assert column_form("order_id", ["A-1", "B-2"]) == "plain"
    assert column_form("order_id", [1.5]) == "plain"
    assert column_form("order_id", [None, None]) == "plain"
    assert column_form("flag_id", [True, False]) == "plain"  # booleans are not integers


@pytest.mark.parametrize(
    ("name", "values", "shown"),
    [
        # midnights are dates
        ("first_order", ["2026-08-03T00:00:00", "2026-08-04T00:00:00"],
         ["2026-08-03", "2026-08-04"]),
        ("day", ["2026-08-03", None], ["2026-08-03", "NULL"]),
        ("at", ["2026-08-03T00:00:00+00:00"], ["2026-08-03"]),
        # months: by name, or two or more first-of-month midnights (date_trunc('month', ...))
        ("month", ["2026-08-01T00:00:00"], ["2026-08"]),
        ("order_month", ["2026-08-01", "2026-09-01"], ["2026-08", "2026-09"]),
        ("period", ["2026-08-01T00:00:00", "2026-09-01T00:00:00"], ["2026-08", "2026-09"]),
        ("started", ["2026-08-01T00:00:00"], ["2026-08-01"]),  # one first day is only a date
        ("month", ["2026-08-03T00:00:00"], ["2026-08-03"]),  # not a first: a date after all
        # a time of day: the whole column shows times, without the T
        ("created_at", ["2026-08-01T13:45:00", "2026-08-02T00:00:00"],
         ["2026-08-01 13:45:00", "2026-08-02 00:00:00"]),
        ("at", ["2026-08-01T13:45:00.250000+02:00"], ["2026-08-01 13:45:00.250000+02:00"]),
        # text that only looks like a date in part stays as it is
        ("note", ["2026-08-01T00:00:00", "soon"], ["2026-08-01T00:00:00", "soon"]),
        ("month", ["2026-08"], ["2026-08"]),
    ],
)  # fmt: skip
def test_dates_months_and_times(name: str, values: list[Any], shown: list[str]) -> None:
    assert [row[0] for row in result_cells([name], [[v] for v in values])] == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "NULL"), (True, "true"), (1234567, "1,234,567"), (0.005, "0.005"), (0.0, "0.00"),
     (-12.345, "-12.35"), ("", "(empty)"), ("2026-08-01T00:00:00", "2026-08-01T00:00:00")],
)  # fmt: skip
def test_a_value_alone_reads_as_a_measure_or_text(value: Any, shown: str) -> None:
    assert cell_text(value) == shown

"""bot.words: result columns get labels a person reads (issue 17 item 4), without renaming an
expression into something it is not."""

from __future__ import annotations

import pytest

from bot.words import label


@pytest.mark.parametrize(
    ("column", "said"),
    [
        ("count_star()", "Count"),
        ("count(*)", "Count"),
        ("COUNT(1)", "Count"),
        ("count(order_id)", "Count of order id"),
        ("SUM(S.NET_REVENUE)", "Sum of net revenue"),
        ('MAX("Order Date")', "Maximum of Order Date"),
        ("median(price)", "Median of price"),
        ("sum", "Sum"),
        ("?column?", "Value"),
        ("_col0", "Value"),
        ("", "Value"),
        ("region_name", "Region name"),
        ("REGION_NAME", "Region name"),
        ("count", "Count"),
        # what it does not know stays as it is
        ("(amount + 1)", "(amount + 1)"),
        ("my_udf(x)", "my_udf(x)"),
        ("(sum(amount) / count_star())", "(sum(amount) / count_star())"),
        ("round(x, 1) * round(y, 2)", "round(x, 1) * round(y, 2)"),
    ],
)
def test_label(column: str, said: str) -> None:
    assert label(column) == said

"""connectors.units: counts agree in number and carry thousands separators, the one way every
layer says them."""

from __future__ import annotations

import pytest

from connectors.units import counted


@pytest.mark.parametrize(
    ("n", "more", "said"),
    [
        (0, False, "0 rows"),
        (1, False, "1 row"),
        (2, False, "2 rows"),
        (1023, False, "1,023 rows"),
        (1234, False, "1,234 rows"),
        (12_345_678, False, "12,345,678 rows"),
        (0, True, "0+ rows"),
        (1, True, "1+ rows"),
        (1000, True, "1,000+ rows"),
    ],
)
def test_counted_agrees_in_number(n: int, more: bool, said: str) -> None:
    assert counted(n, "row", more=more) == said


def test_counted_takes_an_irregular_plural() -> None:
    assert [counted(n, "query", "queries") for n in (0, 1, 2)] == [
        "0 queries",
        "1 query",
        "2 queries",
    ]
    assert counted(1, "reply", "replies", more=True) == "1+ replies"

"""connectors.units: counts agree in number and carry thousands separators, and sizes are said
in binary units with at most one decimal, the one way every layer says them."""

from __future__ import annotations

import pytest

from connectors.units import byte_size, counted


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


def test_counted_takes_a_mean() -> None:
    assert counted(2.5, "model call") == "2.5 model calls"
    assert counted(1.0, "model call") == "1.0 model call"
    assert counted(1234.5, "token") == "1,234.5 tokens"


KIB, MIB, GIB, TIB = 2**10, 2**20, 2**30, 2**40


@pytest.mark.parametrize(
    ("n", "said"),
    [
        (0, "0 bytes"),
        (1, "1 byte"),
        (2, "2 bytes"),
        (1023, "1,023 bytes"),
        (1024, "1 KiB"),
        (1025, "1 KiB"),
        (1536, "1.5 KiB"),
        (10 * KIB - 52, "9.9 KiB"),  # under ten: one decimal
        (10 * KIB, "10 KiB"),  # from ten: whole numbers
        (300_000, "293 KiB"),
        (MIB - 1, "1 MiB"),  # 1,023.999 KiB rounds to 1,024: said in the next unit
        (MIB - 513, "1,023 KiB"),
        (MIB, "1 MiB"),
        (1536 * KIB, "1.5 MiB"),
        (120 * MIB, "120 MiB"),
        (900_000_000, "858 MiB"),
        (10 * GIB, "10 GiB"),
        (3 * TIB, "3 TiB"),
        (5 * 1024 * TIB, "5,120 TiB"),  # TiB at most
    ],
)
def test_byte_size_in_binary_units(n: int, said: str) -> None:
    assert byte_size(n) == said

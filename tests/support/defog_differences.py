"""Every difference between a dialect's gold and the reference, read by hand and written down
per question with what the comparison reports and why, so a new difference (even one only in
the decimals) is never explained away."""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.defog_pairs import DIALECTS, Pair

NO_REFERENCE = "PostgreSQL gold does not run on DuckDB"


@dataclass(frozen=True)
class Known:
    """One question's difference, read by hand: what the comparison reports (its reason, or a
    piece of the error) and why it is not the connector's doing."""

    found: str
    why: str


_ALIAS_IN_ORDER_BY = Known(
    "Reference '",
    "MariaDB refuses an aggregate's alias inside an ORDER BY expression (sqlglot's NULLS "
    "emulation, CASE WHEN alias IS NULL); MySQL 8 accepts it",
)
_FLOAT32 = Known(
    "float rounding at the 2nd decimal",
    "the PostgreSQL gold casts to `float`, 64-bit in PostgreSQL and 32-bit in DuckDB: a ratio "
    "at a rounding boundary rounds the other way on the reference",
)
_MYSQL_DATES = Known("values differ", "MySQL subtracts DATEs as YYYYMMDD numbers, not days")
_MYSQL_DATETIMES = Known("values differ", "MySQL subtracts DATETIMEs as YYYYMMDDhhmmss numbers")

#: Every difference, per question: (dialect, database, the question's opening words) -> what
#: the comparison reports and why. The gold files were written for MySQL 8 and PostgreSQL; the
#: reference is DuckDB. A difference not listed here, or reported otherwise, fails the test.
KNOWN: dict[tuple[str, str, str], Known] = {
    **{
        (dialect, database, question): entry
        for dialect in DIALECTS
        for database, question, entry in (
            (
                "atis",
                "What's the earliest flight departure time in the day in HH:MM?",
                Known(NO_REFERENCE, "DuckDB has no to_char(..., 'HH24:MI')"),
            ),
            (
                "yelp",
                "How many reviews were posted in each month of the year 2021",
                Known(NO_REFERENCE, "DuckDB has no TO_DATE(month, 'Month')"),
            ),
            ("atis", "What is the ratio of one-way trip costs to round-trip costs", _FLOAT32),
            ("atis", "What is the ratio of aircraft capacity to its range in miles", _FLOAT32),
        )
    },
    ("postgres", "broker", "Return the customer id and the difference between their time"): Known(
        "must appear in the GROUP BY",
        "the PostgreSQL gold itself is invalid (PostgreSQL 15 refuses it)",
    ),
    ("postgres", "yelp", "How many reviews were written for businesses located in California"): (
        Known('invalid value "Month"', "the PostgreSQL gold itself fails on PostgreSQL 15")
    ),
    ("mysql", "academic", "What are the top 5 domains with the highest number of authors"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "academic", "What is the total number of publications presented in each"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "advising", "What month were most students admitted?"): _ALIAS_IN_ORDER_BY,
    ("mysql", "advising", "What is the name of the instructor who has taught the most"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "advising", "How many students have declared a major in each program?"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "atis", "What is the total cost of round-trip fares for each airline code?"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "geography", "How many rivers flow through each country?"): _ALIAS_IN_ORDER_BY,
    ("mysql", "geography", "How many mountains are there in each country?"): _ALIAS_IN_ORDER_BY,
    ("mysql", "geography", "How many lakes are there in each state?"): _ALIAS_IN_ORDER_BY,
    ("mysql", "restaurants", "How many restaurants are there in each region?"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "scholar", "Which papers have the highest number of authors"): _ALIAS_IN_ORDER_BY,
    ("mysql", "scholar", "How many papers cite each paper in the dataset named"): (
        _ALIAS_IN_ORDER_BY
    ),
    ("mysql", "advising", "What's the average predicted time to graduation since"): _MYSQL_DATES,
    ("mysql", "car_dealership", "Return the name and phone number of the salesperson with"): (
        _MYSQL_DATES
    ),
    ("mysql", "atis", "What's the average duration between departure and arrival"): (
        _MYSQL_DATETIMES
    ),
    ("mysql", "ewallet", "what was the average user session duration in seconds"): (
        _MYSQL_DATETIMES
    ),
    ("sqlite", "broker", "Return the customer id and the difference between their time"): Known(
        "values differ",
        "SQLite gives the gap as fractional days (julianday), PostgreSQL as an INTERVAL",
    ),
    ("sqlite", "ewallet", "Which users did not get a notification within the first year"): Known(
        "values differ",
        "SQLite compares timestamps as text and date() drops the time of day, so BETWEEN keeps "
        "other rows",
    ),
}


def known(dialect: str, pair: Pair) -> Known | None:
    """The difference written down for this question, or None."""
    gold = pair.dialect
    return next(
        (
            entry
            for (d, database, opening), entry in KNOWN.items()
            if d == dialect and database == gold.database and gold.question.startswith(opening)
        ),
        None,
    )

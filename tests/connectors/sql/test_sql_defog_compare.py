"""sql-eval's gold SQL for PostgreSQL, MySQL (on MariaDB) and SQLite runs through SqlConnector on
the defog-data databases and returns what the PostgreSQL gold returns on DuckDB.

Every question of each dialect's gold file runs (about 210 each; under 30 s a dialect here).
Each question that does not match is written down by hand in `defog_sql.KNOWN`, with what the
comparison reports for it (tied rows' order, float rounding, a PostgreSQL gold DuckDB cannot
run, an error) and why; a difference not written down, one reported otherwise, or a question
written down that now matches fails the test. `-s` prints the figures (`bench/sql_report.py`
prints them with each difference).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import defog_sql

#: Share of each dialect's questions that must run and match DuckDB.
MIN_MATCHED = {"postgres": 0.95, "mysql": 0.88, "sqlite": 0.95}


@pytest.fixture(scope="module")
def cache(defog_duckdb: Path) -> Path:
    """The run's DuckDB references (built once for every file that compares with them); each
    evaluation copies them into a folder of its own there."""
    return defog_duckdb


@pytest.mark.slow
@pytest.mark.parametrize("dialect", defog_sql.DIALECTS)
def test_gold_sql_runs_through_the_connector_and_matches_duckdb(dialect: str, cache: Path) -> None:
    pairs = defog_sql.pairs(dialect)
    assert len(pairs) > 200
    report = defog_sql.evaluate(dialect, pairs, cache)
    print(f"\n{report.summary()}")
    for reason, count in report.reasons().most_common():
        print(f"  {count} x {reason}")
    counts = report.counts()
    assert counts["match"] >= MIN_MATCHED[dialect] * len(pairs), report.summary()
    assert not report.unexplained(), "\n".join(
        f"{o.status}: {o.reason} <- {o.pair.dialect.question!r}: {o.sql[:200]}"
        for o in report.unexplained()
    )
    assert not report.stale(), [o.pair.dialect.question for o in report.stale()]


@pytest.mark.parametrize("dialect", defog_sql.DIALECTS)
def test_each_known_difference_names_one_question(dialect: str) -> None:
    questions = [(p.dialect.database, p.dialect.question) for p in defog_sql.pairs(dialect)]
    for d, database, opening in defog_sql.KNOWN:
        if d == dialect:
            named = [q for db, q in questions if db == database and q.startswith(opening)]
            assert len(named) == 1, (database, opening, named)


def test_a_wrong_answer_is_not_counted_as_a_match(cache: Path) -> None:
    """The comparison can fail: a gold query altered to drop a row differs from DuckDB."""
    pair = next(p for p in defog_sql.pairs("sqlite") if p.dialect.database == "restaurants")
    altered = defog_sql.Pair(
        defog_sql.Gold(
            pair.dialect.database,
            pair.dialect.question,
            pair.dialect.category,
            (f"SELECT * FROM ({pair.dialect.queries[0]}) LIMIT 0",),
        ),
        pair.postgres,
    )
    report = defog_sql.evaluate("sqlite", [pair, altered], cache)
    assert [o.status for o in report.outcomes] == ["match", "differs"]
    assert report.unexplained() == report.outcomes[1:]


def test_a_new_numeric_difference_is_not_explained_away(cache: Path) -> None:
    """A question written down as differing at the 2nd decimal (a 32-bit float on DuckDB),
    whose numbers are now off by 0.3: within 0.5, but not what was written down, so it is
    unexplained. The question as it is stays explained."""
    opening = "What is the ratio of aircraft capacity to its range in miles"
    pair = next(p for p in defog_sql.pairs("sqlite") if p.dialect.question.startswith(opening))
    shifted = defog_sql.Pair(
        defog_sql.Gold(
            pair.dialect.database,
            pair.dialect.question,
            pair.dialect.category,
            (
                "SELECT aircraft_code, capacity_range_ratio + 0.3 AS capacity_range_ratio "
                f"FROM ({pair.dialect.queries[0]})",
            ),
        ),
        pair.postgres,
    )
    report = defog_sql.evaluate("sqlite", [pair, shifted], cache)
    assert [(o.status, o.reason) for o in report.outcomes] == [
        ("differs", "float rounding at the 2nd decimal"),
        ("differs", "numbers apart by < 0.5"),
    ]
    assert report.unexplained() == report.outcomes[1:]

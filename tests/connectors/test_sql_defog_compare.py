"""sql-eval's gold SQL for PostgreSQL, MySQL (on MariaDB) and SQLite runs through SqlConnector on
the defog-data databases and returns what the PostgreSQL gold returns on DuckDB.

Every question of each dialect's gold file runs (about 210 each; under 30 s a dialect here). A
difference either has a reason the comparison finds by loosening itself (tied rows' order,
float rounding, integer division, a PostgreSQL gold DuckDB cannot run) or one written by hand in
`defog_sql.KNOWN` after reading it; anything else fails the test. `-s` prints the figures
(`bench/sql_report.py` prints them with each difference).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.connectors import defog_sql
from tests.connectors.sql_fixtures import CORPORA, require

#: Share of each dialect's questions that must run and match DuckDB.
MIN_MATCHED = {"postgres": 0.95, "mysql": 0.88, "sqlite": 0.95}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require((CORPORA / "defog-data").is_dir(), f"the shared corpora are missing ({CORPORA})")
    return tmp_path_factory.mktemp("defog-duckdb")


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
        f"{o.status}: {o.reason} <- {o.sql[:200]}" for o in report.unexplained()
    )


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

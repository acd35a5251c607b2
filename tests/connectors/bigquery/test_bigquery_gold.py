"""sql-eval's BigQuery gold SQL through the connector, against its PostgreSQL gold on DuckDB.

Each defog-data database is loaded into DuckDB and copied row for row into the emulator; every
BigQuery gold alternative of every question is dry-run (`estimate`) and run (`run`) through
BigQueryConnector, and a question agrees when one of its BigQuery results equals one of its
PostgreSQL gold results on DuckDB (sql-eval's `{a, b}` column alternatives expanded), compared
as multisets of rows (names, column order, row order and number types aside).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import duckdb
import pytest
from google.cloud import bigquery

from connectors.base import ConnectorError, RunContext
from connectors.bigquery.connector import BigQueryConnector
from tests.support import bigquery_defog as defog
from tests.support.needs import unavailable

pytestmark = pytest.mark.slow

#: Rows kept per gold query: more than any gold answer over these small databases.
MAX_ROWS = 10_000


@dataclass
class Tally:
    questions: int = 0
    bigquery_queries: int = 0
    bigquery_ran: int = 0
    compared: int = 0
    agreed: int = 0
    failures: list[str] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)
    no_reference: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def questions() -> list[defog.GoldQuestion]:
    if not defog.DEFOG.is_dir() or not defog.SQL_EVAL.is_dir():
        unavailable(f"The corpora are not at {defog.CORPORA} (they sit beside the repository).")
    return defog.gold_questions()


@pytest.fixture(scope="module")
def references(
    questions: list[defog.GoldQuestion], emulator_client: bigquery.Client
) -> Iterator[dict[str, duckdb.DuckDBPyConnection]]:
    """Every database the questions use, in DuckDB and (as datasets) in the emulator."""
    loaded = {}
    for name in defog.databases(questions):
        loaded[name] = defog.load_duckdb(name)
        defog.copy_to_bigquery(loaded[name], emulator_client, name)
    yield loaded
    for con in loaded.values():
        con.close()


# Every gold query through the emulator: 90 s alone, past the default timeout beside other workers.
@pytest.mark.timeout(300)
def test_bigquery_gold_agrees_with_postgres_gold_on_duckdb(
    questions: list[defog.GoldQuestion],
    references: dict[str, duckdb.DuckDBPyConnection],
    emulator_client: bigquery.Client,
    capsys: pytest.CaptureFixture[str],
) -> None:
    connector = BigQueryConnector(
        emulator_client.project, datasets=sorted(references), client=emulator_client
    )
    tally = Tally(questions=len(questions))
    started = time.perf_counter()
    for number, question in enumerate(questions):
        check(number, question, connector, references[question.database], tally)
    elapsed = time.perf_counter() - started
    with capsys.disabled():
        print(
            f"\nBigQuery gold on the emulator: {tally.questions} questions, "
            f"{tally.bigquery_ran}/{tally.bigquery_queries} BigQuery gold queries ran; "
            f"{tally.agreed}/{tally.compared} questions with a DuckDB reference agree; "
            f"{len(tally.no_reference)} without one; {elapsed:.1f} s"
        )
    assert tally.failures == []
    assert tally.disagreements == []
    # Only a few PostgreSQL golds use functions DuckDB lacks (to_char on a TIME, TO_DATE).
    assert tally.compared >= 0.95 * tally.questions, tally.no_reference


def check(
    number: int,
    question: defog.GoldQuestion,
    connector: BigQueryConnector,
    reference: duckdb.DuckDBPyConnection,
    tally: Tally,
) -> None:
    expected = [defog.run_postgres_gold(reference, sql) for sql in question.postgres]
    golds = [r for r in expected if r is not None]
    got = []
    for alternative, sql in enumerate(question.bigquery):
        tally.bigquery_queries += 1
        try:
            connector.estimate(sql)
            result = connector.run(
                sql,
                max_rows=MAX_ROWS,
                timeout_s=60,
                context=RunContext(job_key=f"gold_{number}_{alternative}"),
            )
        except ConnectorError as exc:
            tally.failures.append(f"{question.database}: {sql}\n  {exc.engine_message[:300]}")
            continue
        assert result.total_rows == len(result.rows)
        tally.bigquery_ran += 1
        got.append(defog.Result(result.columns, result.rows))
    label = f"{question.database}: {question.question}"
    if not golds:
        tally.no_reference.append(label)
        return
    tally.compared += 1
    if any(defog.agree(mine, gold) for mine in got for gold in golds):
        tally.agreed += 1
    else:
        tally.disagreements.append(f"{label}\n  {question.bigquery[0]}")

"""The gate's harmful catalogue (every dialect's) and GoogleSQL escapes, sent straight to
`BigQueryConnector.run` (no gate) on the local bqemulator, over a `canary` dataset holding the
canary tables: no dataset, table, row, routine or model changes, no file appears beside the
secret, and no result or error message holds the secret file's content or a line of /etc/passwd.

BigQuery has no read-only session and the emulator's anonymous login may write anything, so only
the connector's own checks (`connectors/bigquery/sql.py`) stand between these and a job. The
emulator is not BigQuery: its engine is DuckDB behind sqlglot, which runs DuckDB's file readers
and `SELECT ... INTO` where BigQuery would fail, so it is a harsher test of the connector and says
nothing about what BigQuery itself would do with them.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import bigquery

from tests.support import canary
from tests.support.bigquery_emulator import Emulator
from tests.support.fixture_files import load_harmful

pytestmark = pytest.mark.slow  # every test needs the emulator process

HARMFUL = load_harmful()


@pytest.fixture(scope="module")
def bigquery_canary(emulator: Emulator) -> Iterator[canary.BigQueryCanary]:
    made = canary.BigQueryCanary(emulator.url, emulator.project)
    yield made
    made.drop()


@pytest.fixture
def directory() -> Iterator[Path]:
    """Where the secret lies: the emulator runs on this machine and can read it."""
    folder = canary.server_directory()
    yield folder
    shutil.rmtree(folder)


def test_harmful_catalogue_is_contained_by_the_bigquery_connector(
    bigquery_canary: canary.BigQueryCanary, directory: Path
) -> None:
    statements = canary.aimed([h.sql for h in HARMFUL] + canary.ESCAPES["bigquery"], directory)
    connector = bigquery_canary.connector()
    try:
        run = canary.contain(
            connector, statements, bigquery_canary.snapshot, [directory], timeout_s=5.0
        )
        # the connector still answers afterwards
        count = connector.run("SELECT COUNT(*) FROM canary.orders", max_rows=1, timeout_s=30)
    finally:
        connector.close()
    assert count.rows == [(len(canary.ROWS["orders"]),)]
    reached = [sql for sql in statements if sql not in run.stopped]
    # shown with -s: the counts BENCHMARKS.md quotes
    print(
        f"\nbigquery emulator: {run.executed} statements, {dict(run.errors)}; refused before a "
        f"job {len(run.stopped)}; reached the emulator {len(reached)}, ran {len(run.ran)}: "
        f"{run.ran}"
    )
    assert run.executed == len(statements) > len(HARMFUL)
    assert not run.leaked, f"a secret reached a result or an error message: {run.leaked}"
    assert not run.changed, f"changed: {run.changed}"
    # Of the GoogleSQL statements, only two reads of the allowed dataset's metadata became jobs.
    own = canary.aimed(
        [h.sql for h in HARMFUL if h.dialect == "bigquery"] + canary.ESCAPES["bigquery"], directory
    )
    assert [sql for sql in own if sql in reached] == [
        "SELECT * FROM canary.INFORMATION_SCHEMA.TABLES",
        "SELECT * FROM canary.__TABLES__",
    ]


def test_the_emulator_writes_and_reads_files_without_the_connector(
    bigquery_canary: canary.BigQueryCanary, directory: Path
) -> None:
    """Two statements the connector refuses, sent as jobs of their own: the emulator reads the
    secret and creates a table, so the containment above is the connector's doing."""
    client, dataset = bigquery_canary.client, bigquery_canary.dataset
    secret = directory / "secret.txt"
    [(content,)] = client.query(f"SELECT content FROM read_text('{secret}')").result()
    assert canary.secret_text() in content
    stolen = f"{client.project}.{dataset}.stolen"
    config = bigquery.QueryJobConfig(default_dataset=f"{client.project}.{dataset}")
    try:
        client.query("SELECT * INTO stolen FROM users", job_config=config).result()
        assert client.get_table(stolen).num_rows == len(canary.ROWS["users"])
    finally:
        client.delete_table(stolen, not_found_ok=True)

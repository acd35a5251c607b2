"""`querybot doctor` on a BigQuery warehouse, through the real google-cloud-bigquery client
against the local bqemulator (see conftest.py).

BigQuery has no read-only session, and the emulator has no IAM: its anonymous login can create
tables. The connector itself refuses any statement that is not a query before a job exists, so
the doctor's probe is refused even with a login that could write.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google.api_core import exceptions as api
from google.cloud import bigquery

from bot.config import Warehouse
from bot.doctor.deployment import PROBE_TABLE, check_warehouse, render
from connectors import open_connector
from tests.support.bigquery_emulator import Emulator

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def survey(emulator_client: bigquery.Client) -> str:
    client = emulator_client
    client.create_dataset("doctor_survey", exists_ok=True)
    table = bigquery.Table(
        f"{client.project}.doctor_survey.answers",
        schema=[
            bigquery.SchemaField("id", "INT64"),
            bigquery.SchemaField("answer", "STRING"),
        ],
    )
    client.create_table(table, exists_ok=True)
    client.query(
        f"INSERT INTO `{client.project}.doctor_survey.answers` (id, answer) "
        "VALUES (1, 'yes'), (2, 'no')"
    ).result()
    return f"bigquery:{client.project}/doctor_survey"


def test_doctor_on_bigquery_with_a_login_that_can_write(
    emulator: Emulator,
    emulator_client: bigquery.Client,
    survey: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BIGQUERY_API_ENDPOINT", emulator.url)
    probe = f"{emulator_client.project}.doctor_survey.{PROBE_TABLE}"
    # the emulator's login can write: the probe sent as a job of its own lands
    emulator_client.query(f"CREATE TABLE `{probe}` (x INT64)").result()
    emulator_client.delete_table(probe)

    warehouse = Warehouse("survey", survey, survey)
    section = check_warehouse(warehouse, lambda w: open_connector(w.spec, data_dir=tmp_path))
    out = render([section])
    assert "✓ opens (bigquery, bigquery SQL)" in out
    assert "✓ 1 table visible (demo.doctor_survey.answers)" in out
    assert (
        "✓ read-only: a test write (CREATE TABLE querybot_doctor_probe (x INT)) was refused" in out
    )
    assert "Only a query may run on BigQuery" in out
    assert "✓ sample query passed the gate and ran: SELECT `id` FROM" in out
    assert "-> 1 row" in out and "bytes estimated" in out
    assert "problem" not in out
    with pytest.raises(api.NotFound):
        emulator_client.get_table(probe)

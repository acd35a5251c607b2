"""`querybot doctor` on a BigQuery warehouse, through the real google-cloud-bigquery client
against the local bqemulator (see conftest.py).

On BigQuery, what stops a write that reaches the connector is the service account's IAM roles
(the gate and the dry run's statement type stop it before approval; `run` itself sends what it is
given). The emulator has no IAM: its anonymous login can create tables, which is exactly the
case the doctor's probe exists for. It must say so loudly and drop the probe table again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google.api_core import exceptions as api
from google.cloud import bigquery

from bot.config import Warehouse
from bot.doctor import PROBE_DROP, PROBE_TABLE, PROBE_WRITE, check_warehouse, render
from connectors import open_connector
from tests.bigquery.emulator import Emulator


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
    # where the probe lands when nothing stops it: the warehouse's first dataset
    connector = open_connector(survey, data_dir=tmp_path)
    connector.run(PROBE_WRITE, max_rows=1, timeout_s=30)
    assert emulator_client.get_table(probe).table_id == PROBE_TABLE
    connector.run(PROBE_DROP, max_rows=1, timeout_s=30)
    connector.close()

    warehouse = Warehouse("survey", survey, survey)
    section = check_warehouse(warehouse, lambda w: open_connector(w.spec, data_dir=tmp_path))
    out = render([section])
    assert "✓ opens (bigquery, bigquery SQL)" in out
    assert "✓ 1 table visible (demo.doctor_survey.answers)" in out
    assert "✗ NOT READ-ONLY: the test write 'CREATE TABLE querybot_doctor_probe (x INT)' " in out
    assert f"· the probe table {PROBE_TABLE} was dropped again" in out
    assert "✓ sample query passed the gate and ran: SELECT `id` FROM" in out
    assert "-> 1 row" in out and "bytes estimated" in out
    assert "1 problem found" in out
    with pytest.raises(api.NotFound):
        emulator_client.get_table(probe)

"""The Slack flow of issue 2 with the BigQuery connector: the real bot process, the real
`google-cloud-bigquery` client, and the `bqemulator` package serving BigQuery's REST API locally.

Question -> proposal (dry run) -> approve -> result with the right numbers, sources naming the
BigQuery tables; then a rejected proposal runs no job.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google.cloud import bigquery

from connectors.bigquery.connector import endpoint_client
from tests.e2e.sales_flow import SALES, approved_by_region, rejected_runs_nothing, warehouse_bots
from tests.e2e.shared_bot import SharedBot
from tests.support.bigquery_emulator import Emulator, ensure_venv
from tests.support.botproc import BotProcess, sql_reply
from tests.support.side_venv import cache_dir, serving
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

PROJECT = "demo"
DATASET = "shop"
BY_REGION = (
    f"SELECT region, SUM(amount) AS total FROM `{PROJECT}.{DATASET}.sales` "
    "GROUP BY region ORDER BY total DESC"
)
COUNT = f"SELECT COUNT(*) AS n FROM `{PROJECT}.{DATASET}.sales`"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    log = tmp_path_factory.mktemp("bq") / "log"

    def start() -> Emulator:
        return Emulator(ensure_venv(cache_dir() / "bqemulator-venv"), log, PROJECT)

    with serving(start, "The BigQuery emulator") as running:
        client = endpoint_client(PROJECT, running.url)
        client.create_dataset(DATASET)
        table = bigquery.Table(
            f"{PROJECT}.{DATASET}.sales",
            schema=[
                bigquery.SchemaField("region", "STRING", description="Sales region"),
                bigquery.SchemaField("amount", "FLOAT64", description="Sale amount in USD"),
            ],
        )
        client.create_table(table)
        values = ", ".join(f"('{region}', {amount})" for region, amount in SALES)
        client.query(f"INSERT INTO `{PROJECT}.{DATASET}.sales` VALUES {values}").result()
        client.close()
        yield running


REPLIES = {
    "test_question_approval_and_result_on_bigquery": [sql_reply(BY_REGION, "Sales by region.")],
    "test_rejected_proposal_runs_no_job": [sql_reply(COUNT, "Counts sales.")],
}


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin, emulator: Emulator, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedBot]:
    env = {
        "QUERYBOT_WAREHOUSE": f"bigquery:{PROJECT}/{DATASET}",
        "BIGQUERY_API_ENDPOINT": emulator.url,
    }
    with warehouse_bots(standin, env, REPLIES, tmp_path_factory.mktemp("e2e-bigquery")) as bots:
        yield bots


def test_question_approval_and_result_on_bigquery(bot: BotProcess, standin: SlackStandin) -> None:
    table = f"`{PROJECT}.{DATASET}.sales`"
    approved_by_region(bot, standin, table=table, header=["Region", "Total"], engine="bigquery")


def test_rejected_proposal_runs_no_job(bot: BotProcess, standin: SlackStandin) -> None:
    rejected_runs_nothing(bot, standin)

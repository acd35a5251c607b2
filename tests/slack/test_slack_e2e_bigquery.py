"""The Slack flow of issue 2 with the BigQuery connector: the real bot process, the real
`google-cloud-bigquery` client, and the `bqemulator` package serving BigQuery's REST API locally.

Question -> proposal (dry run) -> approve -> result with the right numbers, sources naming the
BigQuery tables; then a rejected proposal runs no job.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import slack_flow as flow
from botproc import BotProcess, audit_events, sql_reply
from google.cloud import bigquery
from shared_bot import SharedBot
from slack_payloads import BOB
from standin import SlackStandin

from bot.blocks import cell_text
from connectors.bigquery import endpoint_client
from tests.bigquery.emulator import Emulator, EmulatorError, cache_dir, ensure_venv
from tests.needs import unavailable

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("checked")]

PROJECT = "demo"
DATASET = "shop"
SALES = [("North", 10.5), ("North", 4.5), ("South", 7.0), ("East", 1.25)]
BY_REGION = (
    f"SELECT region, SUM(amount) AS total FROM `{PROJECT}.{DATASET}.sales` "
    "GROUP BY region ORDER BY total DESC"
)
COUNT = f"SELECT COUNT(*) AS n FROM `{PROJECT}.{DATASET}.sales`"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    try:
        executable = ensure_venv(cache_dir() / "bqemulator-venv")
        running = Emulator(executable, tmp_path_factory.mktemp("bq") / "log", PROJECT)
        running.wait_ready()
    except EmulatorError as exc:
        unavailable(f"The BigQuery emulator is not available: {exc}")
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
    running.stop()


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

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir.mkdir()
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)

    with SharedBot(REPLIES, start, tmp_path_factory.mktemp("e2e-bigquery")) as shared:
        yield shared


def test_question_approval_and_result_on_bigquery(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "sales by region?")
    proposal = flow.proposal(standin, thread)
    text = proposal.all_text()
    assert "Sales by region." in text and f"`{PROJECT}.{DATASET}.sales`" in text

    flow.click(bot, proposal, approve=True)
    result = flow.result(standin, thread)
    assert result.table() == [
        ["region", "total"],
        ["North", cell_text(15.0)],
        ["South", cell_text(7.0)],
        ["East", cell_text(1.25)],
    ]
    sources = result.all_text()
    assert "*3 rows*" in sources and "bigquery" in sources
    assert f"approved by <@{BOB}>" in sources


def test_rejected_proposal_runs_no_job(bot: BotProcess, standin: SlackStandin) -> None:
    thread = flow.ask(bot, "how many sales?")
    proposal = flow.proposal(standin, thread)
    pid = flow.proposal_id(proposal)
    flow.click(bot, proposal, approve=False)
    bot.wait_log(f"Decision on proposal {pid} done: rejected")
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed", "rejected"]

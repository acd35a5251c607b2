"""The Slack flow with the Snowflake connector: the real bot process with
`QUERYBOT_WAREHOUSE=snowflake://...`, the real `snowflake-connector-python` driver, and fakesnow's
server standing in for Snowflake (SNOWFLAKE_ENDPOINT; it has no EXPLAIN, so no estimate is shown).

Question -> proposal -> approve -> result with the right numbers, sources naming the Snowflake
table; then a rejected proposal runs no query.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import snowflake.connector

from tests.e2e.sales_flow import SALES, approved_by_region, rejected_runs_nothing, warehouse_bots
from tests.e2e.shared_bot import SharedBot
from tests.support.botproc import BotProcess, sql_reply
from tests.support.side_venv import cache_dir, serving
from tests.support.snowflake_server import FakesnowServer, ensure_venv
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

BY_REGION = (
    "SELECT region, SUM(amount) AS total FROM shop.sales GROUP BY region ORDER BY total DESC"
)
COUNT = "SELECT COUNT(*) AS n FROM shop.sales"


@pytest.fixture(scope="module")
def fakesnow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakesnowServer]:
    log = tmp_path_factory.mktemp("fakesnow") / "log"

    def start() -> FakesnowServer:
        return FakesnowServer(ensure_venv(cache_dir() / "fakesnow-venv"), log)

    with serving(start, "fakesnow") as running:
        with snowflake.connector.connect(**running.connect_kwargs()) as conn:
            cursor = conn.cursor()
            cursor.execute("CREATE DATABASE SHOPDB")
            cursor.execute("CREATE SCHEMA SHOPDB.SHOP")
            cursor.execute("CREATE TABLE SHOPDB.SHOP.SALES (REGION VARCHAR, AMOUNT FLOAT)")
            cursor.executemany("INSERT INTO SHOPDB.SHOP.SALES VALUES (%s, %s)", SALES)
        yield running


REPLIES = {
    "test_question_approval_and_result_on_snowflake": [sql_reply(BY_REGION, "Sales by region.")],
    "test_rejected_proposal_runs_no_query": [sql_reply(COUNT, "Counts sales.")],
}


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin, fakesnow: FakesnowServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedBot]:
    env = {
        "QUERYBOT_WAREHOUSE": "snowflake://myorg-acct/SHOPDB/SHOP?warehouse=WH&role=READER",
        "SNOWFLAKE_USER": "QUERYBOT",
        "SNOWFLAKE_PASSWORD": "fakesnow-takes-any",
        "SNOWFLAKE_ENDPOINT": fakesnow.endpoint,
    }
    with warehouse_bots(standin, env, REPLIES, tmp_path_factory.mktemp("e2e-snowflake")) as bots:
        yield bots


def test_question_approval_and_result_on_snowflake(bot: BotProcess, standin: SlackStandin) -> None:
    approved_by_region(
        bot, standin, table="SHOPDB.SHOP.SALES", header=["Region", "Total"], engine="snowflake"
    )


def test_rejected_proposal_runs_no_query(bot: BotProcess, standin: SlackStandin) -> None:
    rejected_runs_nothing(bot, standin)

"""The Slack flow with the SQL connectors: the real `querybot run --http` process with
QUERYBOT_WAREHOUSE set in turn to a PostgreSQL, a MariaDB and a SQLite URL, each holding the
employees sample (tests/support/employees.py) behind the SELECT-only login docs/warehouses.md
recommends. Mention -> proposal naming that database's tables -> approve -> the answer's rows,
which the sample's generator computed in Python; then a rejected proposal runs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import cell_text
from tests.e2e.shared_bot import SharedBot
from tests.support import employees
from tests.support import slack_flow as flow
from tests.support.botproc import BotProcess, audit_events, sql_reply
from tests.support.employees import QUESTIONS, Loaded
from tests.support.slack_payloads import BOB
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

HEADCOUNT = QUESTIONS[0]
TOP_PAID = QUESTIONS[2]


@pytest.fixture(scope="module", params=["postgres", "mysql", "sqlite"])
def warehouse(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Loaded]:
    if request.param == "postgres":
        with employees.postgres_employees() as db:
            yield db
    elif request.param == "mysql":
        with employees.mariadb_employees() as db:
            yield db
    else:
        folder = tmp_path_factory.mktemp("employees-sqlite")
        yield employees.sqlite_employees(folder / "employees.db")


def qualified(warehouse: Loaded, sql: str) -> str:
    """The question's SQL in the warehouse's dialect, tables qualified as the catalog lists
    them (the gate checks names against the catalog)."""
    text = sql
    for table in employees.TABLES:
        text = text.replace(f" {table} AS ", f" {warehouse.schema}.{table} AS ")
    return text


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin, warehouse: Loaded, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedBot]:
    replies = {
        "test_mention_proposal_approval_and_answer": [
            sql_reply(qualified(warehouse, HEADCOUNT.sql(warehouse.dialect)), "Headcount.")
        ],
        "test_rejected_proposal_runs_nothing": [
            sql_reply(qualified(warehouse, TOP_PAID.sql(warehouse.dialect)), "Top earners.")
        ],
    }
    env = {"QUERYBOT_WAREHOUSE": warehouse.url}

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir.mkdir()
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)

    with SharedBot(replies, start, tmp_path_factory.mktemp(f"e2e-{warehouse.dialect}")) as shared:
        yield shared


def test_mention_proposal_approval_and_answer(
    bot: BotProcess, standin: SlackStandin, warehouse: Loaded
) -> None:
    thread = flow.ask(bot, HEADCOUNT.text)
    proposal = flow.proposal(standin, thread)
    text = proposal.all_text()
    assert "Headcount." in text
    assert f"`{warehouse.schema}.dept_emp`" in text and f"`{warehouse.schema}.departments`" in text

    flow.click(bot, proposal, approve=True)
    result = flow.result(standin, thread)
    expected = HEADCOUNT.expected()
    assert result.table() == [
        ["Dept name", "Headcount"],
        *[[name, cell_text(count)] for name, count in expected],
    ]
    sources = result.all_text()
    assert f"*{len(expected)} rows*" in sources
    assert f"approved by <@{BOB}>" in sources
    dialect = {"postgres": "postgresql", "mysql": "mysql", "sqlite": "sqlite"}[warehouse.dialect]
    assert dialect in sources


def test_rejected_proposal_runs_nothing(
    bot: BotProcess, standin: SlackStandin, warehouse: Loaded
) -> None:
    thread = flow.ask(bot, TOP_PAID.text)
    proposal = flow.proposal(standin, thread)
    pid = flow.proposal_id(proposal)
    flow.click(bot, proposal, approve=False)
    bot.wait_log(f"Decision on proposal {pid} done: rejected")
    assert [e["event"] for e in audit_events(bot, proposal_id=pid)] == ["proposed", "rejected"]

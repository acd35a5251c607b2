"""End to end over signed HTTP on a warehouse with a dbt project (QUERYBOT_DBT_PROJECT, naming
the project directory: the bot runs `dbt parse` there at start): the real bot process on the shop
DuckDB that dbt built (tests/support/shop), a scripted model, the Web API stand-in.

A question naming a defined metric gets a governed proposal: MetricFlow's SQL, the card saying
"governed: metric revenue, by month" with the metric's definition; approved, it runs and the
answer says so too, and "How did you get this?" names MetricFlow; a follow-up ("now by region")
stays governed. A question that names no metric, or one for which the model picked a metric the
question does not name, gets the model's SQL, labelled "ad hoc SQL"."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.blocks import EXPLAIN_ACTION
from tests.e2e.shared_bot import Reply, SharedBot
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, sql_reply
from tests.support.shop_build import BuiltProject
from tests.support.slack_payloads import BOB
from tests.support.standin import SlackStandin

pytestmark = pytest.mark.usefixtures("checked")

BY_MONTH = {
    "kind": "metric",
    "explanation": "Revenue by month.",
    "query": {
        "metrics": ["revenue"],
        "group_by": [{"name": "metric_time", "grain": "month"}],
        "order_by": [{"name": "metric_time"}],
    },
}
BY_REGION = {
    "kind": "metric",
    "explanation": "Revenue by region.",
    "query": {"metrics": ["revenue"], "group_by": [{"name": "customer__region"}]},
}
NAMES = "SELECT customer_name FROM shop.main.dim_customers ORDER BY customer_name"

RETURNED = "SELECT order_id FROM shop.main.fct_orders WHERE status = 'returned' ORDER BY 1"
#: The local model's answer to "Which orders were returned?" (BENCHMARKS.md, adhoc-02).
REFUNDS = {"kind": "metric", "explanation": "Refunds.", "query": {"metrics": ["refunds"]}}

#: In the file's order: run so, the module starts one bot process (each `dbt parse` is seconds).
REPLIES: dict[str, list[Reply]] = {
    "test_a_metric_question_gets_a_governed_answer": [BY_MONTH],
    "test_a_question_naming_no_metric_gets_ad_hoc_sql": [sql_reply(NAMES, "Customer names.")],
    "test_a_metric_the_question_does_not_name_falls_back_to_ad_hoc_sql": [
        REFUNDS,
        sql_reply(RETURNED, "The returned orders."),
    ],
    "test_a_follow_up_of_a_governed_answer_stays_governed": [BY_MONTH, BY_REGION],
}


@pytest.fixture(scope="module")
def bots(
    standin: SlackStandin, shop_project: BuiltProject, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedBot]:
    """The bot on a copy of the run's shop build (built once for all workers), whose project
    directory the bot's own `dbt parse` writes to, leaving the shared build as it was."""
    root = shutil.copytree(shop_project.root, tmp_path_factory.mktemp("dbt") / "shop")
    env = {
        "QUERYBOT_WAREHOUSE": f"duckdb:{root / shop_project.database.name}",
        "QUERYBOT_DBT_PROJECT": str(root),
        "QUERYBOT_STRATEGIES": "default",
    }

    def start(script: Path, data_dir: Path) -> BotProcess:
        data_dir.mkdir(parents=True, exist_ok=True)
        return BotProcess(slack=standin, data_dir=data_dir, script=script, env=env)

    with SharedBot(REPLIES, start, tmp_path_factory.mktemp("e2e-dbt")) as shared:
        yield shared


def test_a_metric_question_gets_a_governed_answer(bot: BotProcess, standin: SlackStandin) -> None:
    bot.wait_log(r"Ran `dbt parse` in \S+shop")  # named the project directory: parsed at start
    thread = flow.ask(bot, "what was revenue by month?")
    proposal = flow.proposal(standin, thread)
    card = proposal.all_text()
    assert "governed: metric revenue, by month" in card
    assert "revenue (simple: order_total): What customers paid for their orders" in card
    assert "shop.main.fct_orders" in card
    flow.click(bot, proposal, approve=True, user=BOB)
    answer = flow.result(standin, thread)
    text = answer.all_text()
    assert "governed: metric revenue, by month" in text
    for revenue in ("250", "380", "395"):
        assert revenue in text

    bot.send_click(payloads.click(answer, EXPLAIN_ACTION, user=BOB))
    note = standin.wait_for(
        lambda: standin.ephemerals_for(thread.channel, BOB), what="the account for Bob"
    )[0]
    account = json.dumps(note["blocks"], ensure_ascii=False)
    assert "MetricFlow compiled the SQL from the team's metric definitions" in account


def test_a_question_naming_no_metric_gets_ad_hoc_sql(
    bot: BotProcess, standin: SlackStandin
) -> None:
    thread = flow.ask(bot, "list the names of our customers")
    proposal = flow.proposal(standin, thread)
    card = proposal.all_text()
    assert "ad hoc SQL" in card and "governed" not in card
    flow.click(bot, proposal, approve=True, user=BOB)
    text = flow.result(standin, thread).all_text()
    assert "Ada" in text and "ad hoc SQL" in text


def test_a_metric_the_question_does_not_name_falls_back_to_ad_hoc_sql(
    bot: BotProcess, standin: SlackStandin
) -> None:
    """ "Orders" names a metric, so the metric step asks the model; it picks refunds, which the
    question does not name: querybot writes SQL instead, and the card says ad hoc."""
    thread = flow.ask(bot, "which orders were returned?")
    proposal = flow.proposal(standin, thread)
    card = proposal.all_text()
    assert "ad hoc SQL" in card and "governed" not in card
    flow.click(bot, proposal, approve=True, user=BOB)
    text = flow.result(standin, thread).all_text()
    assert "ad hoc SQL" in text
    for order_id in ("103", "108"):
        assert order_id in text


def test_a_follow_up_of_a_governed_answer_stays_governed(
    bot: BotProcess, standin: SlackStandin
) -> None:
    """ "now by region" names no metric; it follows a governed answer, so the metric step keeps
    its metric and groups it anew."""
    thread = flow.ask(bot, "what was revenue by month?")
    flow.click(bot, flow.proposal(standin, thread), approve=True, user=BOB)
    flow.result(standin, thread)
    flow.reply(bot, thread, "now by region")
    card = flow.wait_message(
        standin,
        thread,
        lambda m: "by customer region" in m.all_text() and bool(m.action_values()),
        "the follow-up's proposal",
    )
    assert "governed: metric revenue, by customer region" in card.all_text()
    flow.click(bot, card, approve=True, user=BOB)
    answer = flow.wait_message(
        standin,
        thread,
        lambda m: "Sources:" in m.all_text() and "APAC" in m.all_text(),
        "the follow-up's answer",
    )
    text = answer.all_text()
    assert "governed: metric revenue, by customer region" in text
    for region, revenue in (("EU", "465"), ("NA", "340"), ("APAC", "220")):
        assert region in text and revenue in text

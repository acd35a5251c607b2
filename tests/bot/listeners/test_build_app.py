"""`build_app` as the bot builds it: the token checked and request signatures verified."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
from langgraph.checkpoint.memory import InMemorySaver
from slack_bolt import BoltRequest

from agent.context import AgentDeps
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from bot.app import build_app
from bot.blocks import APPROVE_ACTION
from bot.settings import Settings
from bot.store.sqlite import SqliteStore
from connectors.duckdb.connector import DuckDBConnector
from tests.bot.listeners.listener_app import (
    SECRET,
    buttons,
)
from tests.support import slack_payloads as payloads
from tests.support.botproc import sql_reply
from tests.support.fake_agent import routed
from tests.support.slack_payloads import event_request, signed_headers
from tests.support.standin import SlackStandin


def test_build_app_checks_the_token_and_verifies_signatures(
    slack: SlackStandin, tmp_path: Path
) -> None:
    """The app as the bot builds it, over the real agent (a one-table DuckDB file, a scripted
    model with one reply): the forged request reaches nothing, the signed one is proposed."""
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE sales AS SELECT 'North' AS region, 1.5 AS amount")
    model = ScriptedChatModel(replies=[json.dumps(sql_reply("SELECT region FROM sales"))])
    agent = Agent(AgentDeps(connector=DuckDBConnector(path), model=model), InMemorySaver())
    settings = Settings(
        slack_bot_token="xoxb-test", slack_signing_secret=SECRET, slack_api_url=slack.url[:-1]
    )
    app = build_app(settings, routed(agent), SqliteStore(tmp_path / "s.sqlite"))
    try:
        assert [c.method for c in slack.calls] == ["auth.test"]
        assert app.client.base_url == slack.url
        body = payloads.mention(payloads.new_channel(), "which regions?")
        text, content_type = event_request(body)
        forged = {"content-type": content_type, **signed_headers("not-the-secret", text)}
        assert app.dispatch(BoltRequest(body=text, headers=forged)).status == 401
        good = {"content-type": content_type, **signed_headers(SECRET, text)}
        slack.saw_event(body["event"])  # delivered: a streamed plan may start under it
        assert app.dispatch(BoltRequest(body=text, headers=good)).status == 200
        [card] = slack.wait_thread(
            body["event"]["channel"],
            body["event"]["ts"],
            lambda ms: [m for m in ms if APPROVE_ACTION in buttons(m)],
            what="the proposal",
        )
        assert "SELECT" in card.all_text() and "region" in card.all_text()
        assert model.calls == 1
    finally:
        app.stop_background()  # the recovery watch holds the agent
        agent.close()

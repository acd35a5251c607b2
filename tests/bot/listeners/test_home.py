"""The Home tab (`app_home_opened`): the person's recent questions with what each came to and a
link to its card, the proposals waiting for their approval where they can see them, and the
warehouses they may ask; each section bounded. End to end: tests/e2e/test_home_and_private.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.blocks import APPROVE_ACTION, REJECT_ACTION
from bot.blocks.home import HOME_ITEMS, HOME_TABLES, Asked, Holding, home
from tests.bot.listeners.listener_app import Bot, assembled
from tests.support import slack_payloads as payloads
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import SlackStandin

CAROL = "U0CAROL01"


def opened(bot: Bot, user: str) -> str:
    """`user` opens the Home tab; the text of every section it shows."""
    before = len(bot.slack.published_views)
    assert bot.event(payloads.home_opened(user)).status == 200
    [published] = bot.slack.published_views[before:]
    assert published["user_id"] == user
    return sections(published["view"])


def sections(view: dict[str, Any]) -> str:
    return "\n".join(b["text"]["text"] for b in view["blocks"] if b["type"] == "section")


def link(bot: Bot, channel: str, ts: str) -> str:
    """The link to the card of the thread at `ts` (the stand-in's permalink, escaped)."""
    card = bot.thread(channel, ts)[0]
    permalink = f"https://standin.slack.com/archives/{channel}/p{card.ts.replace('.', '')}"
    return f"{permalink}?thread_ts={ts}&amp;cid={channel}"


def test_home_shows_recent_questions_their_outcomes_and_links(bot: Bot) -> None:
    answered = bot.ask("orders by region?", user=ALICE)
    answered_link = link(bot, *answered)
    bot.click(bot.thread(*answered)[0], APPROVE_ACTION, user=BOB)
    rejected = bot.ask("refunds by day?", user=ALICE)
    bot.click(bot.thread(*rejected)[0], REJECT_ACTION, user=BOB)
    waiting = bot.ask("how many orders?", user=ALICE)
    text = opened(bot, ALICE)
    assert (
        "• how many orders? _(waiting for approval)_ "
        f"<{link(bot, *waiting)}|open>\n"
        "• refunds by day? _(rejected)_ "
        f"<{link(bot, *rejected)}|open>\n"
        f"• orders by region? _(answered)_ <{answered_link}|open>"
    ) in text
    assert "*main* — The demo shop\n1 table" in text and "`demo.main.orders`" in text
    assert "Who may approve: Anyone." in text
    bot.slack.assert_clean()


def test_waiting_proposals_are_those_the_person_may_approve_and_can_see(
    slack: SlackStandin, tmp_path: Path
) -> None:
    """Only Bob may approve. Of Alice's questions, the one in a channel Bob is in waits for him,
    the one in a channel he is not in does not (he would not see its card), nor does Carol's
    question in his channel once it was decided; nothing waits for Carol, who may approve
    nothing."""
    with assembled(slack, tmp_path, approvers=BOB) as bot:
        shared, _ = bot.ask("orders by region?", user=ALICE)
        bot.ask("pay by name?", user=ALICE)  # a channel Bob is not in
        decided = bot.ask("refunds?", user=CAROL, channel=shared)
        bot.click(bot.thread(*decided)[0], REJECT_ACTION, user=BOB)
        slack.members[shared] = {ALICE, BOB, CAROL}
        text = opened(bot, BOB)
        waits = text.split("*Waiting for your approval*", 1)[1].split("*Warehouses", 1)[0]
        assert "orders by region?" in waits and f"asked by <@{ALICE}>" in waits
        assert "pay by name?" not in waits and "refunds?" not in waits
        assert "Nothing waits for you." in opened(bot, CAROL)
        assert f"Who may approve: <@{BOB}>." in text
        # Slack will not say which channels Bob is in: nothing is shown, rather than too much
        slack.revoke_scope("groups:read")
        assert "Nothing waits for you." in opened(bot, BOB)
        slack.grant_scope("groups:read")


def test_the_messages_tab_publishes_nothing(bot: Bot) -> None:
    bot.event(payloads.home_opened(ALICE, tab="messages"))
    assert bot.slack.published_views == []


def test_each_section_is_bounded_and_says_how_many_more() -> None:
    asked = [Asked(f"question {i}?", "answered") for i in range(HOME_ITEMS)]
    many = [(f"t{i}", "") for i in range(HOME_TABLES + 5)]
    warehouses = [Holding("big", "", tuple(many)), Holding("small", "Two tables", (("a", ""),))]
    view = home(
        asked=asked,
        asked_total=HOME_ITEMS + 3,
        waiting=[],
        waiting_total=0,
        warehouses=warehouses,
        approvers="",
    )
    text = sections(view)
    assert "• question 4? _(answered)_\n…and 3 more" in text
    assert f"*big*\n{HOME_TABLES + 5} tables" in text and "…and 5 more" in text
    # the other warehouse is still named and counted, its tables beyond the bound
    assert "*small* — Two tables\n1 table\n…and 1 more" in text
    assert len(view["blocks"]) <= 100

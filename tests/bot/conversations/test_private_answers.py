"""Where the answer goes, as the messages say it (bot.blocks): the card names who will see the
result, a private result offers no follow-up and says its files go to direct messages, and the
thread's note names who got it. End to end: tests/e2e/test_run_as_scan.py."""

from __future__ import annotations

import json

from slack_sdk import WebClient

from agent.outcome import Answer
from bot import blocks
from bot.blocks.private_files import IN_DIRECT_MESSAGES
from bot.conversations.answers import NOT_SENT, Answers
from bot.slack_thread import SlackThread
from tests.bot.blocks.test_blocks import make_answer, make_proposal
from tests.support.message_checks import texts, valid
from tests.support.standin import SlackStandin
from tests.support.standin_messages import dm_channel

ANA, BO = "U0ANA0001", "U0BO00001"


def card(run_as: str, audience: blocks.Audience) -> str:
    """The facts line of a card waiting, decided and running (the same in all three)."""
    prop = make_proposal(run_as=run_as)
    shown = [
        blocks.proposal(prop, requested_by=ANA, audience=audience),
        blocks.decided(prop, requested_by=ANA, verdict="done", audience=audience),
        blocks.running_card(prop, requested_by=ANA, verdict="running", audience=audience),
    ]
    facts = {next(t for t in texts(valid(m)).split('"') if "asked by" in t) for m in shown}
    assert len(facts) == 1
    return facts.pop()


def test_a_card_says_who_will_see_the_result() -> None:
    assert card("sales_emea", blocks.Audience("C0SALES01")).endswith(
        f"asked by <@{ANA}> · runs as <@{ANA}>'s access (`sales_emea`); the result will be "
        "visible to everyone in <#C0SALES01>"
    )
    private = card("sales_emea", blocks.Audience("C0SALES01", private=True))
    assert private.endswith(
        f"runs as <@{ANA}>'s access (`sales_emea`); the result will be sent only to <@{ANA}> "
        "and the approver"
    )
    # without run_as a private channel still says it; a channel answered in its threads says
    # nothing more than before
    assert card("", blocks.Audience("C0SALES01", private=True)).endswith(
        f"asked by <@{ANA}> · the result will be sent only to <@{ANA}> and the approver"
    )
    assert card("", blocks.Audience("C0SALES01")).endswith(f"asked by <@{ANA}>")
    # a direct message has no channel to name
    assert card("ana", blocks.Audience("D0DIRECT1")).endswith(
        "the result is posted in this conversation"
    )


def test_a_private_result_offers_no_follow_up_and_says_where_its_files_go() -> None:
    answer = make_answer(rows=30, total_rows=30, proposal_id="p1", follow_ups=["Drill into “x”"])
    shared = texts(valid(blocks.result(answer, display_rows=5)))
    private = texts(valid(blocks.result(answer, display_rows=5, private=True)))
    assert "Drill into" in shared and IN_DIRECT_MESSAGES not in shared
    assert "Drill into" not in private and IN_DIRECT_MESSAGES in private
    assert "How did you get this?" in private
    # every row shown: nothing is missing, so nothing to say
    whole = make_answer(rows=3, proposal_id="p1")
    assert IN_DIRECT_MESSAGES not in texts(blocks.result(whole, display_rows=5, private=True))


def test_the_thread_is_told_who_got_the_answer() -> None:
    note = valid(blocks.sent_privately([ANA, BO]))
    assert f"The answer was sent privately to <@{ANA}> and <@{BO}>" in note.text
    assert f"<@{ANA}> and <@{BO}>" in texts(note)


def test_a_private_answer_names_only_who_got_it_and_says_so_when_nobody_did(
    slack: SlackStandin,
) -> None:
    """Through the bot's Answers and a real WebClient: Slack refusing one person (say, no longer
    in the channel) costs that person the answer; refusing both leaves the thread a failure
    saying the answer was not posted there either."""
    answers = Answers(WebClient(token="xoxb-standin", base_url=slack.url), display_rows=10)
    thread = SlackThread("T0STANDIN", "C0PRIV002", "1800000000.000100")
    answer = make_answer(rows=2, proposal_id="p1", approved_by=BO)
    slack.server_error("chat.postEphemeral", times=1)  # the first: Ana's result
    answers.post_privately(thread, answer, [ANA, BO], approved_sql=None)
    [note] = slack.thread(thread.channel, thread.ts)
    assert f"sent privately to <@{BO}>:" in note.text and ANA not in note.text
    assert [e["user"] for e in slack.ephemerals] == [BO]
    assert slack.uploads == []
    slack.server_error("chat.postEphemeral", times=2)
    answers.post_privately(thread, answer, [ANA, BO], approved_sql=None)
    failure = slack.thread(thread.channel, thread.ts)[1]
    assert failure.text == NOT_SENT and len(slack.ephemerals) == 1


def daily(days: int) -> Answer:
    """A time series of `days` points (over 20: too many for the native chart, so a PNG)."""
    rows = [[f"2026-01-{d:02}", d] for d in range(1, days + 1)]
    return Answer(
        question="sales per day?", sql="SELECT day, n FROM sales", explanation="Sales per day.",
        tables=[], columns=["day", "n"], rows=rows, total_rows=days, capped=False,
        elapsed_s=0.1, connector="duckdb", approved_by=BO, proposal_id="p1",
    )  # fmt: skip


def test_a_private_answer_sends_its_csv_and_chart_to_each_recipients_direct_messages(
    slack: SlackStandin,
) -> None:
    """Through the bot's Answers and a real WebClient: 30 rows shown 10 at a time and too many
    points for the native chart, so result.csv and the PNG go to Ana's and Bo's direct messages
    with the bot, each told in the thread (privately) where they are; the channel gets no file."""
    answers = Answers(WebClient(token="xoxb-standin", base_url=slack.url), display_rows=10)
    thread = SlackThread("T0STANDIN", "C0PRIV002", "1800000000.000100")
    answers.post_privately(thread, daily(30), [ANA, BO], approved_sql=None)
    slack.assert_clean()
    assert slack.uploads_in(thread.channel, thread.ts) == []
    for user in (ANA, BO):
        [intro] = [m for m in slack.messages.values() if m.channel == dm_channel(user)]
        assert "<#C0PRIV002>" in intro.text and "sales per day?" in intro.text
        files = slack.uploads_in(dm_channel(user), intro.ts)
        assert [f.filename for f in files] == ["result.csv", "chart.png"]
        assert files[0].content.count(b"\n") == 31  # the header and every row
        result, note = slack.ephemerals_for(thread.channel, user)
        assert IN_DIRECT_MESSAGES in json.dumps(result["blocks"])
        link = f"https://standin.slack.com/archives/{intro.channel}/p{intro.ts.replace('.', '')}"
        where = f"<{link}|your direct messages with me>"
        assert note["text"] == f"`result.csv`, `chart.png` are in {where}, for your eyes only."


def test_a_private_answer_whose_chart_fits_the_block_and_rows_the_message_sends_no_file(
    slack: SlackStandin,
) -> None:
    answers = Answers(WebClient(token="xoxb-standin", base_url=slack.url), display_rows=10)
    thread = SlackThread("T0STANDIN", "C0PRIV002", "1800000000.000100")
    answers.post_privately(thread, daily(5), [ANA], approved_sql=None)
    slack.assert_clean()
    assert slack.uploads == [] and slack.calls_to("chat.getPermalink") == []
    result, chart = slack.ephemerals_for(thread.channel, ANA)
    assert IN_DIRECT_MESSAGES not in json.dumps(result["blocks"])
    assert [b["type"] for b in chart["blocks"]] == ["data_visualization"]


def test_files_refused_in_direct_messages_cost_the_files_and_say_so(slack: SlackStandin) -> None:
    answers = Answers(WebClient(token="xoxb-standin", base_url=slack.url), display_rows=10)
    thread = SlackThread("T0STANDIN", "C0PRIV002", "1800000000.000100")
    slack.server_error("chat.postMessage", times=1)  # the direct message with Ana
    answers.post_privately(thread, daily(30), [ANA], approved_sql=None)
    assert slack.uploads == []
    texts_sent = [e["text"] for e in slack.ephemerals_for(thread.channel, ANA)]
    assert texts_sent[-1].startswith("I could not send you `result.csv`, `chart.png`")
    # the answer itself still reached her, and the thread says so
    [note] = slack.thread(thread.channel, thread.ts)
    assert f"sent privately to <@{ANA}>" in note.text

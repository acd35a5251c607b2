"""Where the answer goes, as the messages say it (bot.blocks): the card names who will see the
result, a private result offers no follow-up and says why no file comes with it, and the
thread's note names who got it. End to end: tests/e2e/test_run_as_scan.py."""

from __future__ import annotations

from slack_sdk import WebClient

from bot import blocks
from bot.blocks.results import NOT_ATTACHED
from bot.conversations.answers import NOT_SENT, Answers
from bot.slack_thread import SlackThread
from tests.bot.blocks.test_blocks import make_answer, make_proposal
from tests.support.message_checks import texts, valid
from tests.support.standin import SlackStandin

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


def test_a_private_result_offers_no_follow_up_and_says_why_no_file_follows() -> None:
    answer = make_answer(rows=30, total_rows=30, proposal_id="p1", follow_ups=["Drill into “x”"])
    shared = texts(valid(blocks.result(answer, display_rows=5)))
    private = texts(valid(blocks.result(answer, display_rows=5, private=True)))
    assert "Drill into" in shared and NOT_ATTACHED not in shared
    assert "Drill into" not in private and NOT_ATTACHED in private
    assert "How did you get this?" in private
    # every row shown: nothing is missing, so nothing to say
    whole = make_answer(rows=3, proposal_id="p1")
    assert NOT_ATTACHED not in texts(blocks.result(whole, display_rows=5, private=True))


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

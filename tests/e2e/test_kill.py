"""End to end, `kill -9` of the bot at each step of a thread, then a restart on the same data:
every thread either continues or is told what happened, and the audit log shows that no query
ran twice or without a recorded approval.

The kill points are made deterministic by waiting on what the bot has visibly done (its log, the
stand-in's recorded messages, the audit log) while the step is held open: by a slow scripted
model reply, a slow query, or Slack answering the bot's next call with HTTP 429 and a
Retry-After of ten minutes (the bot waits it out, as slack_sdk's retry handler does), which holds
it between the claim of a click and the recorded approval (the "Approved by" redraw) or between
the query's run and its result's post. The last test takes every kill point at once with the
state in PostgreSQL (QUERYBOT_STATE_URL).
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.conversations.recovery import (
    INTERRUPTED,
    RESTARTED_ASKING,
    RESTARTED_BEFORE_RUN,
    RESTARTED_POSTING,
    RESTARTED_RUNNING,
)
from tests.support import slack_flow as flow
from tests.support import slack_payloads as payloads
from tests.support.botproc import BotProcess, audit_events, data_dir_with, sql_reply, write_script
from tests.support.pgdb import scratch_database
from tests.support.slack_flow import has_text
from tests.support.slack_payloads import ALICE, BOB
from tests.support.standin import Call, SlackStandin

COUNT_CUSTOMERS = "SELECT COUNT(*) AS customers FROM demo.main.customers"
#: About a billion rows per region pair: a minute or more here, so it is still running when killed.
SLOW = (
    "SELECT COUNT(*) AS n FROM demo.main.orders AS a CROSS JOIN demo.main.order_items AS b"
    " CROSS JOIN demo.main.regions AS r WHERE (a.order_id * 7 + b.quantity + r.region_id) % 13 = 0"
)
#: Retry-After of a held Slack call: far longer than the test.
HOLD_S = 600


def bot_for(slack: SlackStandin, demo_file: Path, tmp_path: Path, replies: list) -> BotProcess:
    script = write_script(tmp_path / "script.jsonl", replies)
    return BotProcess(
        slack=slack, data_dir=data_dir_with(tmp_path / "data", demo_file), script=script
    )


def executions(bot: BotProcess, proposal_id: str) -> list[str]:
    return [e["event"] for e in audit_events(bot, proposal_id=proposal_id)]


def test_killed_while_the_model_thinks(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    slow_reply = {**sql_reply(COUNT_CUSTOMERS, "Counts."), "__delay__": 120}
    bot = bot_for(slack, demo_file, tmp_path, [slow_reply])
    with bot:
        body = payloads.mention(payloads.new_channel(), "how many customers?")
        bot.send_event(body)
        thread = flow.Thread(body["event"]["channel"], body["event"]["ts"])
        flow.wait_message(slack, thread, has_text("Working on it"), "the placeholder")
        bot.wait_log(r"Question in \S+ from")  # the worker took it: the model is thinking
        bot.kill()

        write_script(bot.script, [sql_reply(COUNT_CUSTOMERS, "Counts.")])
        bot.start()
        told = flow.wait_message(slack, thread, has_text(RESTARTED_ASKING), "the restart note")
        assert told.action_values() == {}
        # Slack redelivering the original event is still ignored: nothing is asked twice
        bot.send_event(body, retry=1)
        bot.wait_log(f"Ignoring a repeated delivery of event {body['event_id']}")

        flow.ask(bot, "how many customers?", thread=thread)
        proposal = flow.proposal(slack, thread)
        flow.click(bot, proposal, approve=True)
        flow.result(slack, thread)
        pid = flow.proposal_id(proposal)
        assert executions(bot, pid) == ["proposed", "approved", "executed"]
        assert [e["event"] for e in audit_events(bot, event="executed")] == ["executed"]
    print(bot.log()[-5000:])  # shown when the test failed


def test_killed_after_the_proposal_was_posted(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    bot = bot_for(slack, demo_file, tmp_path, [sql_reply(COUNT_CUSTOMERS, "Counts.")])
    with bot:
        body = payloads.mention(payloads.new_channel(), "how many customers?")
        bot.send_event(body)
        thread = flow.Thread(body["event"]["channel"], body["event"]["ts"])
        proposal = flow.proposal(slack, thread)
        bot.kill()

        bot.start()
        bot.send_event(body, retry=1)  # Slack's retry after the outage: not asked again
        bot.wait_log(f"Ignoring a repeated delivery of event {body['event_id']}")
        flow.click(bot, proposal, approve=True)  # the same card: the thread continues
        flow.result(slack, thread)
        flow.click(bot, proposal, approve=True, user=ALICE)  # a late second click
        slack.wait_for(lambda: slack.ephemerals_for(thread.channel, ALICE), what="the note")
        pid = flow.proposal_id(proposal)
        assert executions(bot, pid) == ["proposed", "approved", "executed"]
        assert not [
            m for m in slack.thread(thread.channel, thread.ts) if RESTARTED_ASKING in m.all_text()
        ]
    print(bot.log()[-5000:])


def test_killed_while_the_approved_query_runs(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    bot = bot_for(
        slack,
        demo_file,
        tmp_path,
        [sql_reply(SLOW, "Counts pairs."), sql_reply(COUNT_CUSTOMERS, "Counts.")],
    )
    with bot:
        thread = flow.ask(bot, "count the pairs of customers")
        proposal = flow.proposal(slack, thread)
        pid = flow.proposal_id(proposal)
        flow.click(bot, proposal, approve=True)
        slack.wait_for(lambda: executions(bot, pid) == ["proposed", "approved"], what="approval")
        # the card says "Running…" only once the query has run for a while
        flow.wait_message(slack, thread, has_text("Running"), "the running card", timeout=60)
        bot.kill()

        write_script(bot.script, [sql_reply(COUNT_CUSTOMERS, "Counts.")])
        bot.start()
        note = flow.wait_message(slack, thread, has_text(RESTARTED_RUNNING), "the restart note")
        assert note.action_values() == {}
        card = flow.wait_message(
            slack, thread, lambda m: m.ts == proposal.ts and INTERRUPTED in m.all_text(), "card"
        )
        assert f"Approved by <@{BOB}>" in card.all_text() and card.action_values() == {}
        # a stale click on the old card claims nothing
        flow.click(bot, proposal, approve=True, user=ALICE)
        slack.wait_for(lambda: slack.ephemerals_for(thread.channel, ALICE), what="the note")

        flow.ask(bot, "how many customers then?", thread=thread)  # the thread goes on
        fresh = flow.proposal(slack, thread, skip=1)
        flow.click(bot, fresh, approve=True)
        flow.result(slack, thread)
        assert executions(bot, pid) == ["proposed", "approved"]  # never run again
        ran = [e["proposal_id"] for e in audit_events(bot, event="executed")]
        assert ran == [flow.proposal_id(fresh)]
    print(bot.log()[-5000:])


def held(slack: SlackStandin, method: str) -> Call:
    """The call to `method` the stand-in answered 429 to; the bot waits out its Retry-After."""
    return slack.wait_for(
        lambda: next((c for c in slack.calls_to(method) if c.status == 429), None),
        what=f"the bot to be held on {method}",
    )


def test_killed_after_the_query_ran_before_the_result_was_posted(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    bot = bot_for(slack, demo_file, tmp_path, [sql_reply(COUNT_CUSTOMERS, "Counts.")])
    with bot:
        thread = flow.ask(bot, "how many customers?")
        proposal = flow.proposal(slack, thread)
        pid = flow.proposal_id(proposal)
        # the result's post is the next chat.postMessage: Slack holds it back for ten minutes
        slack.rate_limit("chat.postMessage", retry_after=HOLD_S)
        flow.click(bot, proposal, approve=True)
        held(slack, "chat.postMessage")
        assert executions(bot, pid) == ["proposed", "approved", "executed"]
        bot.kill()

        bot.start()
        # the result is in the thread's checkpoint: posted after a note, not run again
        note = flow.wait_message(slack, thread, has_text(RESTARTED_POSTING), "the restart note")
        assert note.action_values() == {}
        result = flow.result(slack, thread)
        assert float(result.ts) > float(note.ts)
        card = next(m for m in slack.thread(thread.channel, thread.ts) if m.ts == proposal.ts)
        assert f"Approved by <@{BOB}>" in card.all_text() and card.action_values() == {}
        assert INTERRUPTED not in card.all_text()
        flow.click(bot, proposal, approve=True, user=ALICE)  # a stale click claims nothing
        slack.wait_for(lambda: slack.ephemerals_for(thread.channel, ALICE), what="the note")
        assert executions(bot, pid) == ["proposed", "approved", "executed"]  # not run again
    print(bot.log()[-5000:])


def test_killed_between_the_claim_and_the_recorded_approval(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    replies = [sql_reply(COUNT_CUSTOMERS, "Counts."), sql_reply(COUNT_CUSTOMERS, "Counts.")]
    bot = bot_for(slack, demo_file, tmp_path, replies)
    with bot:
        thread = flow.ask(bot, "how many customers?")
        proposal = flow.proposal(slack, thread)
        pid = flow.proposal_id(proposal)
        # the click is claimed, then its card is redrawn "Approved by" before anything runs:
        # Slack holds that chat.update back, so the approval is not recorded yet
        slack.rate_limit("chat.update", retry_after=HOLD_S)
        flow.click(bot, proposal, approve=True)
        held(slack, "chat.update")
        assert executions(bot, pid) == ["proposed"]
        bot.kill()

        bot.start()
        note = flow.wait_message(slack, thread, has_text(RESTARTED_BEFORE_RUN), "the note")
        assert note.action_values() == {}
        card = flow.wait_message(
            slack, thread, lambda m: m.ts == proposal.ts and INTERRUPTED in m.all_text(), "card"
        )
        assert card.action_values() == {}
        flow.click(bot, proposal, approve=True, user=ALICE)  # a stale click claims nothing
        slack.wait_for(lambda: slack.ephemerals_for(thread.channel, ALICE), what="the note")
        flow.ask(bot, "how many customers then?", thread=thread)  # the thread goes on
        fresh = flow.proposal(slack, thread, skip=1)
        flow.click(bot, fresh, approve=True)
        flow.result(slack, thread)
        assert executions(bot, pid) == ["proposed"]  # never approved, never run
        ran = [e["proposal_id"] for e in audit_events(bot, event="executed")]
        assert ran == [flow.proposal_id(fresh)]
    print(bot.log()[-5000:])


def test_killed_at_every_step_with_the_state_in_postgresql(
    slack: SlackStandin, demo_file: Path, tmp_path: Path
) -> None:
    """The kill points above with QUERYBOT_STATE_URL (checkpoints, store and audit log in
    PostgreSQL), four threads each held at one step and a single kill: after the restart each
    thread is told (on PostgreSQL a process must be found dead on two looks in a row, here a
    second apart, not the default minute) and nothing runs again."""
    replies = [
        sql_reply(COUNT_CUSTOMERS, "Counts."),  # claimed, its approval not yet recorded
        sql_reply(SLOW, "Counts pairs."),  # running
        sql_reply(COUNT_CUSTOMERS, "Counts."),  # ran, its result not yet posted
        {**sql_reply(COUNT_CUSTOMERS, "Counts."), "__delay__": HOLD_S},  # the model thinking
    ]
    with scratch_database("kill") as state_url:
        bot = BotProcess(
            slack=slack,
            data_dir=data_dir_with(tmp_path / "data", demo_file),
            script=write_script(tmp_path / "script.jsonl", replies),
            env={"QUERYBOT_STATE_URL": state_url, "QUERYBOT_RECOVER_EVERY_S": "1"},
        )
        with bot:
            threads, proposals = [], []
            for question in (
                "how many customers?",
                "count the pairs of customers",
                "how many customers, again?",
            ):
                threads.append(flow.ask(bot, question))
                proposals.append(flow.proposal(slack, threads[-1]))
            claimed, running, ran = (flow.proposal_id(p) for p in proposals)

            slack.rate_limit("chat.update", retry_after=HOLD_S)
            flow.click(bot, proposals[0], approve=True)
            held(slack, "chat.update")
            assert executions(bot, claimed) == ["proposed"]

            flow.click(bot, proposals[1], approve=True)
            flow.wait_message(slack, threads[1], has_text("Running"), "running", timeout=60)
            assert executions(bot, running) == ["proposed", "approved"]

            slack.rate_limit("chat.postMessage", retry_after=HOLD_S)
            flow.click(bot, proposals[2], approve=True)
            held(slack, "chat.postMessage")
            assert executions(bot, ran) == ["proposed", "approved", "executed"]

            thinking = flow.ask(bot, "how many customers now?")
            bot.wait_log(rf"Question in \S+:{re.escape(thinking.ts)} from")
            flow.wait_message(slack, thinking, has_text("Working on it"), "the placeholder")
            bot.kill()

            bot.start()
            # claimed: nothing ran; running: it may have; ran: its result is posted now
            notes = (RESTARTED_BEFORE_RUN, RESTARTED_RUNNING, RESTARTED_POSTING)
            for thread, proposal, note in zip(threads, proposals, notes, strict=True):
                flow.wait_message(slack, thread, has_text(note), "the restart note")
                if note == RESTARTED_POSTING:
                    flow.result(slack, thread)
                    continue
                card = flow.wait_message(
                    slack,
                    thread,
                    lambda m, p=proposal: m.ts == p.ts and INTERRUPTED in m.all_text(),
                    "the card",
                )
                assert card.action_values() == {}
            told = flow.wait_message(slack, thinking, has_text(RESTARTED_ASKING), "the note")
            assert told.action_values() == {}
            # nothing ran again, and nothing ran without its approval
            assert executions(bot, claimed) == ["proposed"]
            assert executions(bot, running) == ["proposed", "approved"]
            assert executions(bot, ran) == ["proposed", "approved", "executed"]
            assert [e["proposal_id"] for e in audit_events(bot, event="executed")] == [ran]
        print(bot.log()[-5000:])

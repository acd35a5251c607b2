"""Scheduled questions asked in words, before a mention goes to the agent: "schedules" shows
the person their list (to them only), and "schedule this every Monday at 9 in #sales" (read by
`schedule_request`, no model) schedules the thread's latest approved answer. Anything else,
including a question that merely contains "every", is a question as before."""

from __future__ import annotations

from slack_sdk import WebClient

from bot.blocks.base import finish, section
from bot.blocks.schedules import schedule_list
from bot.listeners.querybot import Querybot
from bot.listeners.scheduling import Wanted, make_schedule
from bot.schedules.requests import is_list_request, schedule_request
from bot.schedules.when import WhenError
from bot.slack_thread import SlackThread, post, tell

NO_ANSWER = (
    "This thread has no approved answer to schedule. Ask the question here, approve its SQL, "
    "then say `@querybot schedule this every Monday at 9` (or press *Schedule…* under the "
    "answer)."
)


def in_words(
    client: WebClient, querybot: Querybot, thread: SlackThread, text: str, user: str
) -> bool:
    """Whether `text` (a mention's, without the bot's name) was about schedules, and so was
    dealt with here; False: it is a question for the agent."""
    if querybot.schedules is None:
        return False
    if is_list_request(text):
        tell(client, thread, user, schedule_list(querybot.schedules.mine(user)))
        return True
    try:
        asked = schedule_request(text)
    except WhenError as exc:
        tell(client, thread, user, str(exc))
        return True
    if asked is None:
        return False
    pid = querybot.store.answered.latest(thread.id)
    record = querybot.store.proposal(pid) if pid else None
    if record is None:
        post(client, thread, finish(NO_ANSWER, [section(NO_ANSWER)]))
        return True
    wanted = Wanted(cron=asked.cron, where=asked.where, channel=asked.channel)
    make_schedule(client, querybot, record, user, wanted)
    return True

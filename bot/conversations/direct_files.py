"""A private answer's files (its CSV, its chart as PNG, its SQL when cut short), sent to one
recipient's direct messages with the bot, with a private note in the thread linking to them.

Slack's ephemeral messages cannot carry files, and a file shared in the channel would be seen by
everyone in it. So the bot posts a note in the person's direct messages with it (`chat.postMessage`
to their user id: the app's Messages tab, covered by `chat:write`), shares the files in that
note's thread (`files_upload_v2`, `files:write`), and tells them in the channel's thread where
they are (`chat.getPermalink`, then `chat.postEphemeral`). A failed file costs that file; a
refused direct message costs the files, and the person is told so."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.blocks import Message
from bot.blocks.attachments import Attachment
from bot.blocks.private_files import files_intro, files_not_sent, files_sent
from bot.slack_thread import SlackThread, tell

log = logging.getLogger(__name__)


def send_direct(
    client: WebClient,
    thread: SlackThread,
    user: str,
    question: str,
    attachments: Sequence[Attachment],
) -> None:
    """`attachments` to `user`'s direct messages with the bot, and the note in `thread`."""
    if not attachments:
        return
    names = [a.filename for a in attachments]
    try:
        intro = files_intro(thread.channel, question)
        posted = client.chat_postMessage(
            channel=user, text=intro.text, blocks=intro.blocks, unfurl_links=False
        )
        dm, ts = str(posted["channel"]), str(posted["ts"])
    except SlackApiError:
        log.exception("Could not open the direct messages of %s for a private answer", user)
        _tell(client, thread, user, files_not_sent(names))
        return
    sent = [a.filename for a in attachments if _upload(client, dm, ts, a)]
    if not sent:
        _tell(client, thread, user, files_not_sent(names))
        return
    try:
        link = str(client.chat_getPermalink(channel=dm, message_ts=ts).get("permalink") or "")
    except SlackApiError:
        log.warning("No permalink for the files sent to %s", user, exc_info=True)
        link = ""
    _tell(client, thread, user, files_sent(link, sent))


def _upload(client: WebClient, channel: str, ts: str, attachment: Attachment) -> bool:
    try:
        client.files_upload_v2(
            channel=channel,
            thread_ts=ts,
            file=attachment.content,
            filename=attachment.filename,
            title=attachment.title,
        )
    except Exception:
        log.exception("Could not send %s to %s", attachment.filename, channel)
        return False
    return True


def _tell(client: WebClient, thread: SlackThread, user: str, message: Message) -> None:
    try:
        tell(client, thread, user, message)
    except SlackApiError:
        log.exception("Could not tell %s where the files of their answer went", user)

"""The messages that carry a private answer's files: the note in the asker's direct messages
with the bot that the files hang under, and the private note in the thread linking to it.

Slack's ephemeral messages cannot carry files, and a file shared in a channel is there for
everyone, so a private answer's CSV and chart go to each recipient's direct messages."""

from __future__ import annotations

from collections.abc import Sequence

from bot.blocks.base import Message, escaped, finish, section

#: Said in a private answer that shows only some of its rows.
IN_DIRECT_MESSAGES = (
    "The whole result comes as a file in your direct messages with me: a file shared here "
    "would be seen by everyone in the channel."
)


def files_intro(channel: str, question: str) -> Message:
    """The direct message the files of a private answer in `channel` are shared under."""
    text = f"The files of your private answer in <#{channel}>: {escaped(question, 300)}"
    return finish(text, [section(f":lock: {text}")], mrkdwn=True)


def files_sent(link: str, filenames: Sequence[str]) -> Message:
    """The thread's private note saying where the files went (`link`: "" when Slack gave none)."""
    names = ", ".join(f"`{escaped(n, 100)}`" for n in filenames)
    where = f"<{link}|your direct messages with me>" if link else "your direct messages with me"
    text = f"{names} {'is' if len(filenames) == 1 else 'are'} in {where}, for your eyes only."
    return finish(text, [section(f":paperclip: {text}")], mrkdwn=True)


def files_not_sent(filenames: Sequence[str]) -> Message:
    """The thread's private note when the files could not be sent."""
    names = ", ".join(f"`{escaped(n, 100)}`" for n in filenames)
    text = (
        f"I could not send you {names} in our direct messages (Slack refused it). Open a direct "
        "message with me (or ask whoever runs querybot to enable the app's Messages tab) and "
        "ask again."
    )
    return finish(text, [section(f":warning: {text}")], mrkdwn=True)

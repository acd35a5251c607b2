"""Where a conversation lives in Slack, and the calls the bot makes to write there."""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk import WebClient

from bot.blocks import Message


@dataclass(frozen=True)
class SlackThread:
    """A Slack thread; its `id` is the agent's thread id."""

    team: str
    channel: str
    #: The thread's root message ts (a top-level mention's or direct message's own ts); "" for
    #: a direct message conversation kept from before those had threads, which is one
    #: conversation in the channel itself.
    ts: str

    @property
    def id(self) -> str:
        return f"{self.team}:{self.channel}:{self.ts}"

    @classmethod
    def from_id(cls, thread_id: str) -> SlackThread:
        team, channel, ts = thread_id.split(":")
        return cls(team=team, channel=channel, ts=ts)


def post(client: WebClient, thread: SlackThread, message: Message) -> str:
    """Post `message` in `thread` (links and media not unfurled); returns its ts."""
    response = client.chat_postMessage(
        channel=thread.channel,
        thread_ts=thread.ts or None,
        text=message.text,
        blocks=message.blocks,
        unfurl_links=False,
        unfurl_media=False,
    )
    return str(response["ts"])


def update(client: WebClient, channel: str, ts: str, message: Message) -> None:
    """Replace the message `ts` of `channel` with `message`."""
    client.chat_update(channel=channel, ts=ts, text=message.text, blocks=message.blocks)


def reply(
    client: WebClient, thread: SlackThread, placeholder: str | None, message: Message
) -> None:
    """`message` in `thread`: in place of the `placeholder` message when there is one, else
    posted below the rest."""
    if placeholder:
        update(client, thread.channel, placeholder, message)
    else:
        post(client, thread, message)


def tell(client: WebClient, thread: SlackThread, user: str, message: Message | str) -> None:
    """Post `message` (a Message, or plain text) in `thread` for `user`'s eyes only."""
    text, blocks = (message, None) if isinstance(message, str) else (message.text, message.blocks)
    client.chat_postEphemeral(
        channel=thread.channel, user=user, thread_ts=thread.ts or None, text=text, blocks=blocks
    )

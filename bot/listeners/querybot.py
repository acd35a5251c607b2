"""The bot's own objects a listener acts through, handed to every listener by Bolt.

A Bolt middleware (`Querybot.provide`) puts them in each request's context under "querybot", and
Bolt passes a context value to the listener argument of the same name, as it passes `ack`,
`body` or `client`: a listener is a plain module-level function that names what it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slack_bolt import BoltContext

from bot.access.approvals import Approvers
from bot.access.channels import ChannelRules
from bot.blocks.home import Holding
from bot.conversations.conversations import Conversations
from bot.files.uploads import ThreadUploads
from bot.store.base import Store
from bot.suggested_prompts import SuggestedPrompts

if TYPE_CHECKING:
    from bot.schedules.service import Schedules

#: The context key, and so the name of the listener argument that receives a `Querybot`.
CONTEXT_KEY = "querybot"


@dataclass(frozen=True)
class Querybot:
    """What the listeners need besides the request: the conversations they hand work to, the
    store of proposals, who may decide, which channels are answered, the warehouses (with their
    tables) the Home tab lists to a user (by their id), the loader of shared files (None: files
    are ignored), the suggested prompts of direct messages (None: none), and the scheduled
    questions (None: schedules are off)."""

    conversations: Conversations
    store: Store
    approvers: Approvers
    channels: ChannelRules
    warehouses: Callable[[str], list[Holding]]
    uploads: ThreadUploads | None
    prompts: SuggestedPrompts | None = None
    schedules: Schedules | None = None

    def provide(self, context: BoltContext, next_: Callable[[], None]) -> None:
        """Bolt middleware: this object in the request's context, for the listener."""
        context[CONTEXT_KEY] = self
        next_()

"""Which Agent answers a Slack thread: the one of the warehouse its channel is mapped to, else
the default warehouse's.

`Router.route` resolves a thread to its `Route`, once for each piece of work the bot does there:
the Agent, or why no Agent answers. An `override` (a thread's own sandbox of shared files) is
asked first. `RoutedChannelRules` refuses, before any work, in channels no warehouse answers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from slack_sdk import WebClient

from agent.conversation import Agent
from agent.outcome import Outcome
from bot.access.channels import ChannelRules
from bot.access.identity import Directory, RunAsRules
from bot.blocks import escape
from bot.blocks.home import Holding
from bot.config import DeploymentConfig
from bot.slack_thread import SlackThread
from connectors.base import ConnectorError

log = logging.getLogger(__name__)


def unmapped(config: DeploymentConfig, *, links: bool) -> str:
    """The polite note for a channel no warehouse answers: where to ask instead.

    `links` writes mrkdwn: channels as Slack links (`<#C…>`), descriptions escaped; otherwise
    plain text with channel ids (for text that is escaped before posting)."""
    text = escape if links else str
    by_warehouse: dict[str, list[str]] = {}
    for channel, name in sorted(config.channels.items()):
        by_warehouse.setdefault(name, []).append(f"<#{channel}>" if links else f"#{channel}")
    places = []
    for name, channels in by_warehouse.items():
        description = config.warehouses[name].description
        about = f" ({text(description)})" if description else ""
        places.append(f"{', '.join(channels[:5])} for {name}{about}")
    where = "; ".join(places) if places else "no channel yet"
    return (
        "This conversation is not connected to a warehouse, so I cannot answer data questions "
        f"here. Ask in {where}. To use me here, ask whoever runs querybot to map this channel "
        "in its config file."
    )


@dataclass(frozen=True)
class Route:
    """What answers one thread: its Agent, or (`agent` None) why none does."""

    thread_id: str
    agent: Agent | None
    #: Said in the thread, instead of an answer, when no Agent answers it.
    refusal: str = ""
    #: The thread has files of its own, so it is a conversation from its first file on: before its
    #: first question, and after its files were removed.
    files: bool = False
    #: Which identity each person's questions run as; None: the login's.
    run_as: RunAsRules | None = None

    def is_conversation(self) -> bool:
        """Whether the thread is a conversation with the bot (replies there need no mention)."""
        return self.files or (self.agent is not None and self.agent.has_thread(self.thread_id))

    def refused(self) -> Outcome:
        """What a question or decision comes to in a thread no Agent answers."""
        return Outcome(kind="failed", message=self.refusal)


class Router:
    """Resolves threads to the Agents that answer them (see the module docstring)."""

    def __init__(
        self,
        agents: Mapping[str, Agent],
        config: DeploymentConfig,
        *,
        override: Callable[[str], Route | None] | None = None,
    ) -> None:
        needed = set(config.channels.values()) | ({config.default} if config.default else set())
        if needed - set(agents):
            raise ValueError(f"No agent for the warehouse(s) {sorted(needed - set(agents))}")
        self.agents = dict(agents)
        self.config = config
        self.override = override

    def route(self, thread_id: str) -> Route:
        """The override's route for `thread_id` when it has one, else that of the warehouse its
        channel asks, else a refusal naming the channels that are answered."""
        found = self.override(thread_id) if self.override is not None else None
        if found is not None:
            return found
        name = self.config.warehouse_for(SlackThread.from_id(thread_id).channel)
        if name is None:
            return Route(thread_id, None, refusal=unmapped(self.config, links=False))
        return Route(thread_id, self.agents[name], run_as=self.config.warehouses[name].run_as)

    def warehouses(self, user: str = "", directory: Directory | None = None) -> list[Holding]:
        """Each warehouse `user` can ask, with its description and the tables they can ask
        about (name, description), for the Home tab. Of a warehouse with run_as rules, only the
        tables `user`'s identity may read, as the warehouse says (none, and so not the
        warehouse, when they are unmapped, or no `directory` says who they are)."""
        listed: list[Holding] = []
        for name, agent in self.agents.items():
            try:
                tables = agent.tables()
                config = self.config.warehouses.get(name)
                rules = config.run_as if config is not None else None
                if rules is not None:
                    run_as = directory.run_as(rules, user) if directory and user else None
                    if run_as is None or not run_as.role:
                        continue
                    hidden = set(agent.unreadable(run_as.role, [t.name for t in tables]))
                    tables = [t for t in tables if t.name not in hidden]
            except ConnectorError:  # one warehouse down must not blank the whole tab
                log.exception("Could not list the tables of warehouse %r", name)
                continue
            description = config.description if config is not None else ""
            held = tuple((t.name, t.description) for t in tables)
            listed.append(Holding(name, description, held))
        return listed


class RoutedChannelRules(ChannelRules):
    """`ChannelRules`, and a polite refusal in channels (and direct messages) no warehouse
    answers: channels not mapped when the config file has no default."""

    def __init__(
        self, client: WebClient, config: DeploymentConfig, allowed: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(client, allowed)
        self.config = config

    def refusal(self, channel: str, ext_shared: bool | None = None) -> str | None:
        refusal = super().refusal(channel, ext_shared)
        if refusal is None and self.config.warehouse_for(channel) is None:
            return unmapped(self.config, links=True)
        return refusal

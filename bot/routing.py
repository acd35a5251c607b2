"""Which warehouse answers a Slack thread: the one its channel is mapped to, else the default.

`Router` is the `ThreadAgent` the Slack conversations drive; it hands each call to the Agent of
the thread's warehouse. An `override` (e.g. a thread's own sandbox of dropped files) is asked
first. `RoutedChannelRules` refuses, before any work, in channels no warehouse answers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from slack_sdk import WebClient

from agent.conversation import Agent
from agent.explain import Explanation
from agent.outcome import Outcome
from bot.blocks import escape
from bot.channels import ChannelRules
from bot.config import DeploymentConfig
from bot.slack_thread import SlackThread
from bot.threads import ThreadAgent
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


class Router:
    """Dispatches each thread's calls to its warehouse's Agent (see the module docstring)."""

    def __init__(
        self,
        agents: Mapping[str, Agent],
        config: DeploymentConfig,
        *,
        override: Callable[[str], ThreadAgent | None] | None = None,
    ) -> None:
        needed = set(config.channels.values()) | ({config.default} if config.default else set())
        if needed - set(agents):
            raise ValueError(f"No agent for the warehouse(s) {sorted(needed - set(agents))}")
        self.agents = dict(agents)
        self.config = config
        self.override = override

    def warehouse_of(self, thread_id: str) -> str | None:
        """The name of the warehouse the thread's channel asks (ignoring the override)."""
        return self.config.warehouse_for(SlackThread.from_id(thread_id).channel)

    def agent_for(self, thread_id: str) -> Agent | None:
        """The Agent answering `thread_id`: the override's when it gives an Agent, else the
        channel's warehouse's, else None (no warehouse for this channel)."""
        if self.override is not None:
            found = self.override(thread_id)
            if found is not None:
                return found if isinstance(found, Agent) else None
        name = self.warehouse_of(thread_id)
        return self.agents[name] if name else None

    def _target(self, thread_id: str) -> ThreadAgent | None:
        if self.override is not None:
            found = self.override(thread_id)
            if found is not None:
                return found
        name = self.warehouse_of(thread_id)
        return self.agents[name] if name else None

    def _nowhere(self) -> Outcome:
        return Outcome(kind="failed", message=unmapped(self.config, links=False))

    # -- ThreadAgent ---------------------------------------------------------------------------

    def ask(self, thread_id: str, question: str, *, user: str) -> Outcome:
        target = self._target(thread_id)
        return target.ask(thread_id, question, user=user) if target else self._nowhere()

    def decide(
        self,
        thread_id: str,
        proposal_id: str,
        *,
        approved: bool,
        user: str,
        labels: Mapping[str, str] | None = None,
        sql_sha256: str | None = None,
    ) -> Outcome:
        target = self._target(thread_id)
        if target is None:
            return self._nowhere()
        return target.decide(
            thread_id,
            proposal_id,
            approved=approved,
            user=user,
            labels=labels,
            sql_sha256=sql_sha256,
        )

    def edit(self, thread_id: str, proposal_id: str, sql: str, *, user: str) -> Outcome:
        target = self._target(thread_id)
        return target.edit(thread_id, proposal_id, sql, user=user) if target else self._nowhere()

    def cancel(self, thread_id: str, proposal_id: str, *, user: str) -> bool:
        target = self._target(thread_id)
        return target.cancel(thread_id, proposal_id, user=user) if target else False

    def has_thread(self, thread_id: str) -> bool:
        target = self._target(thread_id)
        return target.has_thread(thread_id) if target else False

    def explain(self, thread_id: str, proposal_id: str | None = None) -> Explanation | None:
        target = self._target(thread_id)
        return target.explain(thread_id, proposal_id) if target else None

    def interrupted_decision(self, thread_id: str, proposal_id: str) -> Outcome | None:
        target = self._target(thread_id)
        return target.interrupted_decision(thread_id, proposal_id) if target else None

    # -- the Home tab ----------------------------------------------------------------------------

    def tables(self) -> list[tuple[str, str]]:
        """(name, description) of every table people can ask about. With several warehouses
        each name says its warehouse ("finance: public.invoices")."""
        several = len(self.agents) > 1
        listed: list[tuple[str, str]] = []
        for name, agent in self.agents.items():
            try:
                tables = agent.deps.catalog.tables
            except ConnectorError:  # one warehouse down must not blank the whole tab
                log.exception("Could not list the tables of warehouse %r", name)
                continue
            listed += [(f"{name}: {t.name}" if several else t.name, t.description) for t in tables]
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

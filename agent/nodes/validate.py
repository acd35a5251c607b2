"""The validate node: the draft is screened and judged; a pass becomes a proposal, a failure
feedback for repair."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from agent.context import AgentDeps
from agent.screen.judge import judge, screen
from agent.state import ThreadState, Update, failed, unreadable_tables
from connectors.base import ConnectorError


def validate(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    draft = state["draft"]
    assert draft is not None
    try:
        snapshot = deps.visible(identity := state.get("identity", ""))
    except ConnectorError as exc:
        return failed(unreadable_tables(exc))
    return judge(
        state, draft, screen(draft["sql"], snapshot, deps, identity=identity), config, deps
    )

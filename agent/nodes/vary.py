"""Question variations (strategy `variations:N`): N paraphrases of the question, in one model
call, used only to widen the table search of a warehouse too big to be shown whole. A warehouse
shown whole needs no search, so it costs no call. Never blocks: a failure means no paraphrases.
"""

from __future__ import annotations

import logging

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from agent.context import AgentDeps
from agent.model import prompts
from agent.state import ThreadState, Update
from connectors.units import counted

log = logging.getLogger(__name__)


class Variations(BaseModel):
    questions: list[str] = Field(description="The question rephrased, one per item.")


def vary(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    count = deps.strategies.variations
    try:
        index, _ = deps.context.warm(deps.visible(state.get("identity", "")))
        if index is None:  # the whole schema is shown: nothing to widen
            return {"variations": []}
        human = prompts.VARIATIONS.format(count=count, question=state["question"])
        out = deps.structured(Variations).invoke([HumanMessage(human)], config)
    except Exception as exc:  # the SQL step meets (and reports) model and warehouse faults too
        log.warning("no variations: %r", exc)
        text = (
            f"The question could not be rephrased ({type(exc).__name__}), so tables were "
            "searched with the question alone."
        )
        return {"variations": [], "trace": [{"kind": "variations", "text": text}]}
    reply: Variations | None = out.get("parsed")
    found = [q.strip()[:500] for q in (reply.questions if reply else []) if q.strip()][:count]
    text = f"The question was rephrased {counted(len(found), 'way')} to search for tables."
    if not found:
        text = "No usable rephrasing came back, so tables were searched with the question alone."
    return {"variations": found, "trace": [{"kind": "variations", "text": text}]}

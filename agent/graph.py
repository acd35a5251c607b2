"""The graph: start -> generate -> validate -> (repair) -> approve -> execute -> (repair) -> finish,
and after an answer: relax (an empty result: a loosened proposal, back to approve) or suggest
(follow-up questions), each when its strategy is on.

Nodes decide; the routing functions below only read what the nodes decided.
"""

from __future__ import annotations

from functools import partial
from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agent.accounting import metered
from agent.context import AgentDeps, Strategies
from agent.nodes.approve import approve
from agent.nodes.execute import execute
from agent.nodes.finish import finish
from agent.nodes.generate import generate
from agent.nodes.relax import relax
from agent.nodes.start import start
from agent.nodes.suggest import suggest
from agent.nodes.validate import validate
from agent.relax import is_empty
from agent.state import ThreadState


def after_draft(state: ThreadState) -> Literal["finish", "validate", "generate"]:
    """After start (pasted SQL is a draft) and after generate (no draft: unreadable reply)."""
    if state.get("final"):
        return "finish"
    return "validate" if state.get("draft") else "generate"


def after_validate(state: ThreadState) -> Literal["finish", "approve", "generate"]:
    if state.get("final"):
        return "finish"
    return "approve" if state.get("proposal") else "generate"


def after_approve(state: ThreadState) -> Literal["finish", "execute", "validate", "approve"]:
    if state.get("final"):
        return "finish"
    if state.get("decision"):
        return "execute"
    # an edit replaced the proposal with a draft; a stale resume leaves the proposal waiting
    return "approve" if state.get("proposal") else "validate"


def after_execute(
    state: ThreadState, strategies: Strategies
) -> Literal["finish", "generate", "relax", "suggest"]:
    final = state.get("final")
    if not final:
        return "generate"
    answer = final.get("answer")
    if final["kind"] != "answer" or not answer:
        return "finish"
    if is_empty(answer["columns"], answer["rows"], answer["total_rows"]):
        return "relax" if strategies.relax_empty and not state.get("relaxed") else "finish"
    return "suggest" if strategies.follow_ups else "finish"


def after_relax(state: ThreadState) -> Literal["finish", "approve"]:
    return "approve" if state.get("proposal") and not state.get("final") else "finish"


def build_graph(
    deps: AgentDeps, checkpointer: BaseCheckpointSaver | None = None
) -> CompiledStateGraph:
    """Compile the question graph over `deps`, persisting threads in `checkpointer`."""
    graph = StateGraph(ThreadState)
    graph.add_node("start", partial(start, deps=deps))
    graph.add_node("generate", partial(metered("generate", generate), deps=deps))
    graph.add_node("validate", partial(validate, deps=deps))
    graph.add_node("approve", partial(approve, deps=deps))
    graph.add_node("execute", partial(execute, deps=deps))
    graph.add_node("relax", partial(relax, deps=deps))
    graph.add_node("suggest", partial(suggest, deps=deps))
    graph.add_node("finish", finish)
    graph.add_edge(START, "start")
    graph.add_conditional_edges("start", after_draft)
    graph.add_conditional_edges("generate", after_draft)
    graph.add_conditional_edges("validate", after_validate)
    graph.add_conditional_edges("approve", after_approve)
    graph.add_conditional_edges("execute", partial(after_execute, strategies=deps.strategies))
    graph.add_conditional_edges("relax", after_relax)
    graph.add_edge("suggest", "finish")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)

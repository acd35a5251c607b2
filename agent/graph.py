"""The graph: start -> generate -> validate -> (repair) -> approve -> execute -> (repair) -> finish,
and after an answer: relax (an empty result: a loosened proposal, back to approve) or suggest
(follow-up questions), each when its strategy is on. SQL a person pasted goes start -> paste
(the same checks; refused SQL ends the question with the reasons) -> approve -> execute, and
never to the model: no repair of it, nor of its warehouse errors. A person's edit of the waiting
proposal goes approve -> edit, which checks it as validate (or paste) checks a draft and routes
as they do, except that an edit the gate refuses goes back to approve and changes nothing.

Before the first draft, where the warehouse's dbt project defines metrics: metric (a question
asking for them gets a metric query MetricFlow compiles; its SQL goes to validate as any draft,
and when none comes of it, the steps below follow). Then, when their strategies are on: match
(a question none of whose words occurs in a warehouse shown whole, or one ranking by a vague
word with no measure, ends in a clarifying reply, with no model call), vary (paraphrases for
the table search), plan (a grounded plan), candidates (N drafts ranked by checks, then
agreement, instead of generate's one; it screens and judges them itself, so it routes as
validate does); after the model's SQL is accepted: check (a second model call, back to generate
when it finds a problem).

Nodes decide; the routing functions below only read what the nodes decided."""

from __future__ import annotations

from functools import partial
from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agent.context import AgentDeps, Strategies
from agent.model.accounting import metered
from agent.nodes.approve import approve
from agent.nodes.candidates import candidates
from agent.nodes.check import check
from agent.nodes.edit import edit
from agent.nodes.execute import execute
from agent.nodes.finish import finish
from agent.nodes.generate import generate
from agent.nodes.match import match
from agent.nodes.metric import metric
from agent.nodes.paste import paste
from agent.nodes.plan import plan
from agent.nodes.relax import relax
from agent.nodes.start import start
from agent.nodes.suggest import suggest
from agent.nodes.validate import validate
from agent.nodes.vary import vary
from agent.outcome import Answer
from agent.state import ThreadState
from agent.strategies.relax import is_empty

#: The compiled question graph: its state, input and output are a `ThreadState` (no context).
Graph = CompiledStateGraph[ThreadState, None, ThreadState, ThreadState]

Step = Literal[
    "finish", "validate", "paste", "generate", "match", "vary", "plan", "candidates", "metric"
]


def model_step(state: ThreadState, strategies: Strategies, metrics: bool = False) -> Step:
    """The next step towards a first draft: the metric step once (where there are `metrics`),
    the look for the question's words in the warehouse, the strategies' steps that have not run
    yet (variations, then plan), then N candidates on the first attempt, else generate."""
    if metrics and state.get("metric") is None:
        return "metric"
    if (strategies.ask_unmatched or strategies.ask_vague) and state.get("matched") is None:
        return "match"
    if strategies.variations and state.get("variations") is None:
        return "vary"
    if strategies.plan and state.get("plan") is None:
        return "plan"
    if strategies.candidates > 1 and not state.get("attempts"):
        return "candidates"
    return "generate"


def after_draft(state: ThreadState, strategies: Strategies, metrics: bool = False) -> Step:
    """After start (pasted SQL is a draft, judged by paste), the metric step, the strategy steps
    and generate (no draft: unreadable reply, asked again)."""
    if state.get("final"):
        return "finish"
    if state.get("draft"):
        return "paste" if state.get("pasted") else "validate"
    return model_step(state, strategies, metrics)


def after_validate(state: ThreadState) -> Literal["finish", "approve", "generate", "check"]:
    if state.get("final"):
        return "finish"
    if state.get("proposal"):
        return "check" if state.get("needs_check") else "approve"
    return "generate"


def after_check(state: ThreadState) -> Literal["approve", "generate"]:
    return "approve" if state.get("proposal") else "generate"


def after_approve(state: ThreadState) -> Literal["finish", "execute", "edit", "approve"]:
    if state.get("final"):
        return "finish"
    if state.get("decision"):
        return "execute"
    if state.get("edit"):
        return "edit"
    return "approve"  # a stale resume: the proposal waits on


def after_edit(state: ThreadState) -> Literal["finish", "approve", "generate", "check"]:
    edited = state.get("edit")
    if edited and "refused" in edited:
        return "approve"  # nothing changed: the proposal waits on
    return after_validate(state)


def after_execute(
    state: ThreadState, strategies: Strategies
) -> Literal["finish", "generate", "relax", "suggest"]:
    final = state.get("final")
    if not final:
        return "generate"
    if final["kind"] != "answer" or not final.get("answer"):
        return "finish"
    answer = Answer.from_dict(final["answer"])
    if is_empty(answer.columns, answer.rows, answer.total_rows):
        return "relax" if strategies.relax_empty and not state.get("relaxed") else "finish"
    return "suggest" if strategies.follow_ups else "finish"


def after_relax(state: ThreadState) -> Literal["finish", "approve"]:
    return "approve" if state.get("proposal") and not state.get("final") else "finish"


def build_graph(deps: AgentDeps, checkpointer: BaseCheckpointSaver[str] | None = None) -> Graph:
    """Compile the question graph over `deps`, persisting threads in `checkpointer`."""
    graph = StateGraph(ThreadState)
    graph.add_node("start", partial(start, deps=deps))
    graph.add_node("generate", partial(metered("generate", generate), deps=deps))
    graph.add_node("metric", partial(metered("metric", metric), deps=deps))
    graph.add_node("match", partial(match, deps=deps))
    graph.add_node("vary", partial(metered("vary", vary), deps=deps))
    graph.add_node("plan", partial(metered("plan", plan), deps=deps))
    graph.add_node("candidates", partial(metered("candidates", candidates), deps=deps))
    graph.add_node("check", partial(metered("check", check), deps=deps))
    graph.add_node("validate", partial(validate, deps=deps))
    graph.add_node("paste", partial(paste, deps=deps))
    graph.add_node("approve", partial(approve, deps=deps))
    graph.add_node("edit", partial(edit, deps=deps))
    graph.add_node("execute", partial(execute, deps=deps))
    graph.add_node("relax", partial(relax, deps=deps))
    graph.add_node("suggest", partial(suggest, deps=deps))
    graph.add_node("finish", finish)
    graph.add_edge(START, "start")
    to_draft = partial(after_draft, strategies=deps.strategies, metrics=deps.metrics is not None)
    for node in ("start", "metric", "match", "vary", "plan", "generate"):
        graph.add_conditional_edges(node, to_draft)
    for node in ("candidates", "validate", "paste"):
        graph.add_conditional_edges(node, after_validate)
    graph.add_conditional_edges("check", after_check)
    graph.add_conditional_edges("approve", after_approve)
    graph.add_conditional_edges("edit", after_edit)
    graph.add_conditional_edges("execute", partial(after_execute, strategies=deps.strategies))
    graph.add_conditional_edges("relax", after_relax)
    graph.add_edge("suggest", "finish")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)

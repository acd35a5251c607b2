"""Before the first model call (strategy `ask_unmatched`): a question that names nothing this
warehouse holds gets a clarifying reply from code, with no model call.

"Nothing" is decided as the context builder decides it (`ModelContext.unmatched`): the whole schema
is shown, and no word of the question (nor of the question it follows in the thread) occurs in the
tables' names, descriptions or profiled values, and no glossary term or verified example matches it,
nor does it name a metric the asker may read. Asked of such a question, a small model answers
general knowledge from lookalike columns ("website visitors" as customers); on the defog and demo
sets no answerable question matched no word (BENCHMARKS.md, "Answer quality with a real model"). A
warehouse too big to show whole is searched instead, and the model judges what the search found.
"""

from __future__ import annotations

from agent.catalog.snapshot import CatalogSnapshot
from agent.context import AgentDeps
from agent.model import prompts
from agent.nodes.generate import model_context
from agent.semantic.readable import readable_layer
from agent.state import ThreadState, Update, failed, unreadable_tables
from connectors.base import ConnectorError

#: How many table names the reply lists before "and N more".
LISTED_TABLES = 12


def match(state: ThreadState, deps: AgentDeps) -> Update:
    try:
        snapshot = deps.visible(state.get("identity", ""))
    except ConnectorError as exc:
        return {"matched": False, **failed(unreadable_tables(exc))}
    if names_a_metric(state, deps, snapshot) or not model_context(state, deps, snapshot).unmatched:
        return {"matched": True}
    said = (
        "No word of the question occurs in the warehouse's tables, so it was asked what data it "
        "means (no model call)."
    )
    return {
        "matched": False,
        "final": {"kind": "clarify", "message": unmatched_reply(snapshot)},
        "trace": [{"kind": "unmatched", "text": said}],
    }


def names_a_metric(state: ThreadState, deps: AgentDeps, snapshot: CatalogSnapshot) -> bool:
    """Whether the question names a metric of the semantic layer that the asker may read (one
    over tables an identity may not read is not named: saying so would tell that it exists)."""
    layer = deps.metrics.layer if deps.metrics is not None else None
    if deps.metrics is None or layer is None:
        return False
    offered = readable_layer(layer, snapshot.tables) if state.get("identity") else layer
    return any(
        m in offered.metrics for m in deps.metrics.mentioned(state["question"], deps.glossary)
    )


def unmatched_reply(snapshot: CatalogSnapshot) -> str:
    """What the person is told: what happened, what the warehouse holds, what to do next."""
    names = sorted({t.short_name for t in snapshot.tables})
    listed = ", ".join(names[:LISTED_TABLES])
    if len(names) > LISTED_TABLES:
        listed += f" and {len(names) - LISTED_TABLES} more"
    return prompts.UNMATCHED_REPLY.format(tables=listed)

"""Before the first model call (strategies `ask_unmatched` and `ask_vague`): a question that
names nothing this warehouse holds, or one that ranks by a vague word with no measure stated
(agent.strategies.vague), gets a clarifying reply from code, with no model call.

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
from agent.semantic.semantic_manifest import SemanticLayer
from agent.state import ThreadState, Update, failed, own_turns, unreadable_tables
from agent.strategies.vague import Definitions, may_be_vague, vague_measure
from agent.strategies.vague_reply import options, vague_note, vague_reply
from connectors.base import ConnectorError

#: How many table names the reply lists before "and N more".
LISTED_TABLES = 12


def match(state: ThreadState, deps: AgentDeps) -> Update:
    try:
        snapshot = deps.visible(state.get("identity", ""))
    except ConnectorError as exc:
        return {"matched": False, **failed(unreadable_tables(exc))}
    unmatched = (
        deps.strategies.ask_unmatched
        and not names_a_metric(state, deps, snapshot)
        and model_context(state, deps, snapshot).unmatched
    )
    if not unmatched:
        asked = vague(state, deps, snapshot) if deps.strategies.ask_vague else {}
        return {"matched": True, **asked}
    said = (
        "No word of the question occurs in the warehouse's tables, so it was asked what data it "
        "means (no model call)."
    )
    return {
        "matched": False,
        "final": {"kind": "clarify", "message": unmatched_reply(snapshot)},
        "trace": [{"kind": "unmatched", "text": said}],
    }


def vague(state: ThreadState, deps: AgentDeps, snapshot: CatalogSnapshot) -> Update:
    """A clarifying reply when the question's measure is vague (`vague_measure`), offering the
    warehouse's candidates; nothing when it is not, or when it answers this step's question
    (the reply to it is never asked again, whatever it says)."""
    question = state["question"]
    if not may_be_vague(question):
        return {}
    turns = own_turns(state)[-1:]
    if turns and any(s["kind"] == "vague" for s in turns[0].get("steps") or []):
        return {}
    layer = offered_layer(state, deps, snapshot)
    definitions = Definitions.of(snapshot, layer, deps.glossary)
    found = vague_measure(question, definitions, earlier=[t["question"] for t in turns])
    if found is None:
        return {}
    index, _ = deps.context.warm(snapshot)
    candidates = options(question, snapshot, word=found.word, layer=layer, index=index)
    return {
        "final": {"kind": "clarify", "message": vague_reply(found, candidates)},
        "trace": [{"kind": "vague", "text": vague_note(found)}],
    }


def offered_layer(
    state: ThreadState, deps: AgentDeps, snapshot: CatalogSnapshot
) -> SemanticLayer | None:
    """The semantic layer's part the asker may read (all of it for the bot's own login)."""
    layer = deps.metrics.layer if deps.metrics is not None else None
    if layer is None:
        return None
    return readable_layer(layer, snapshot.tables) if state.get("identity") else layer


def names_a_metric(state: ThreadState, deps: AgentDeps, snapshot: CatalogSnapshot) -> bool:
    """Whether the question names a metric of the semantic layer that the asker may read (one
    over tables an identity may not read is not named: saying so would tell that it exists)."""
    offered = offered_layer(state, deps, snapshot)
    if deps.metrics is None or offered is None:
        return False
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

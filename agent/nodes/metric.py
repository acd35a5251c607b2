"""The metric step: a question that asks for metrics the team defined is answered by a metric
query MetricFlow compiles, not by SQL the model writes.

It runs once per question, before the first SQL draft, where the warehouse's dbt project defines
metrics (`deps.metrics`). A question that names a metric (agent.semantic.metrics.named_in), or
follows a governed answer in the thread ("now by region"), is shown the metrics and dimensions,
and the model answers with a `MetricReply`: a metric query, or "none" when no metric fits. A
query choosing a metric the question does not name (nor the governed answer it follows) counts
as "none": "Which orders were returned?" names the metric order_count ("Orders"), not refunds. A
query the semantic layer or MetricFlow refuses goes back once with the problems ("did you
mean"). A question asked as a warehouse identity (run_as) is shown, and may choose, only the
metrics and dimensions of tables that identity may read (`readable_layer`); a choice
of any other counts as "none" too. Compiled SQL becomes the draft, carrying its metric query;
the gate, the cost estimate, the value check and the approval then treat it like any other.
Whenever no metric query comes of it, the question goes on to the usual SQL step: `metric` in
the state records why, and the trace says so.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from agent.catalog.documentation import meta_text
from agent.context import AgentDeps
from agent.model import prompts
from agent.model.errors import is_retryable
from agent.model.reply import MetricReply
from agent.semantic.metric_query import MetricQuery, MetricQueryError
from agent.semantic.metrics import Metrics
from agent.semantic.readable import not_offered, readable_layer
from agent.semantic.semantic_manifest import SemanticLayer
from agent.state import Draft, Step, ThreadState, Turn, Update, own_turns
from connectors.base import ConnectorError
from connectors.units import counted

log = logging.getLogger(__name__)

#: Model calls the step makes at most: the query, and one correction.
ATTEMPTS = 2
#: Values of a dimension listed in the prompt at most.
LISTED_VALUES = 20


def metrics_text(layer: SemanticLayer) -> str:
    lines = []
    for metric in layer:
        also = f" (also called {', '.join(metric.synonyms)})" if metric.synonyms else ""
        notes = f" ({meta_text(metric.meta)})" if metric.meta else ""
        lines.append(f"- {metric.definition()}{also}{notes}")
    return "\n".join(lines)


def dimensions_text(metrics: Metrics, layer: SemanticLayer) -> str:
    """One line per dimension: its name, kind, meaning and (documented) values."""
    documentation = metrics.documentation
    relations = {m.name: m.relation for m in layer.models}
    lines = []
    for dimension in layer.dimensions.values():
        relation = relations.get(dimension.model, "")
        column = documentation.column(relation, dimension.expr) if relation else None
        about = dimension.description or (column.description if column else "")
        kind = "time" if dimension.is_time else "categorical"
        line = f"- {dimension.name} ({kind})" + (f": {about}" if about else "")
        values = column.values if column else ()
        if values:
            shown = ", ".join(f"'{v}'" for v in values[:LISTED_VALUES])
            line += f" (values: {shown})"
        lines.append(line)
    lines += [f"- {name} (entity)" for name in layer.entities]
    return "\n".join(lines)


def _history(turns: list[Turn]) -> str:
    lines = []
    for turn in turns:
        lines.append(f"Q: {turn['question']}")
        if metric := turn.get("metric"):
            lines.append(f"Metric query: {json.dumps(metric['query'])}")
        else:
            lines.append("Answered with SQL, not with metrics.")
    return "\n".join(lines)


def _messages(state: ThreadState, deps: AgentDeps, layer: SemanticLayer) -> list[BaseMessage]:
    assert deps.metrics is not None
    system = prompts.METRIC.format(
        today=deps.today().isoformat(),
        metrics=metrics_text(layer),
        dimensions=dimensions_text(deps.metrics, layer),
    )
    messages: list[BaseMessage] = [SystemMessage(system)]
    turns = own_turns(state)[-deps.limits.history_turns :]
    if turns:
        messages.append(HumanMessage(prompts.METRIC_HISTORY.format(turns=_history(turns))))
    messages.append(HumanMessage(state["question"]))
    return messages


def _skip(why: str, text: str = "") -> Update:
    update: Update = {"metric": {"used": False, "why": why}}
    if text:
        update["trace"] = [{"kind": "metric_none", "text": text}]
    return update


def _named(state: ThreadState, deps: AgentDeps, metrics: Metrics) -> list[str]:
    """The metrics the question names; a follow-up of a governed answer keeps its metrics
    ("now by region")."""
    named = metrics.mentioned(state["question"], deps.glossary)
    previous = own_turns(state)[-1:]
    earlier = previous[0].get("metric") if previous else None
    if earlier:
        named += [m for m in earlier.get("query", {}).get("metrics", []) if m not in named]
    return named


def _not_kept(
    reply: MetricReply | None, layer: SemanticLayer, offered: SemanticLayer, named: list[str]
) -> Update | None:
    """Why the model's pick is not kept, so the model writes SQL; None when it is."""
    if reply is None or reply.kind == "none" or reply.query is None:
        why = "unreadable" if reply is None else "no metric fits"
        return _skip(why, "No defined metric fits the question, so the model writes SQL.")
    if not_offered(reply.query, layer, offered):
        text = "The model chose a metric or dimension your access may not read; SQL next."
        return _skip("not offered", text)
    unasked = [m for m in reply.query.metrics if m in offered.metrics and m not in named]
    if unasked:
        return _skip(
            "not asked",
            f"The model chose the metric {', '.join(unasked)}, which the question does not "
            "name, so the model writes SQL.",
        )
    return None


def metric(state: ThreadState, config: RunnableConfig, deps: AgentDeps) -> Update:
    metrics = deps.metrics
    layer = metrics.layer if metrics is not None else None
    if metrics is None or layer is None or deps.metric_model is None:
        return _skip("no metrics")
    named = _named(state, deps, metrics)
    if not named:
        return _skip("no metric named")
    identity = state.get("identity", "")
    try:
        tables = deps.visible(identity).tables
    except ConnectorError:
        return _skip("no tables")  # the SQL step says what happened
    # under an identity, only the metrics and dimensions of the tables it may read
    offered = readable_layer(layer, tables) if identity else layer
    named = [m for m in named if m in offered.metrics]
    if not named:  # under an identity; else only if the layer changed since the last turn
        # a metric the identity may not read is one it did not name: a word on it would tell
        # the asker that a metric of that name exists
        return _skip("no metric named")
    messages = _messages(state, deps, offered)
    problems: list[str] = []
    for attempt in range(1, ATTEMPTS + 1):
        try:
            out: dict[str, Any] = deps.metric_model.invoke(messages, config)
        except Exception as exc:  # the SQL step may still answer: say so in the trace only
            calls = deps.limits.model_attempts if is_retryable(exc) else 1
            log.warning(
                "The metric step's model call failed after %s: %r", counted(calls, "call"), exc
            )
            return _skip("model failed", "The model could not choose a metric query; SQL next.")
        reply: MetricReply | None = out.get("parsed")
        if (skip := _not_kept(reply, layer, offered, named)) is not None:
            return skip
        assert reply is not None and reply.query is not None  # _not_kept says so
        try:
            compiled = metrics.compile(reply.query, tables, offered)
        except MetricQueryError as exc:
            problems = exc.problems
            if attempt < ATTEMPTS:
                shown = json.dumps(reply.query.model_dump(exclude_defaults=True))
                listed = "\n".join(f"- {p}" for p in problems)
                text = prompts.METRIC_REPAIR.format(query=shown, problems=listed)
                messages = [*messages, HumanMessage(text)]
            continue
        return _governed(reply, reply.query, compiled.sql, compiled.label, compiled.definitions)
    refused = "; ".join(problems)[:500]
    text = f"The metric query was refused ({refused}), so the model writes SQL."
    return _skip("refused", text)


def _governed(
    reply: MetricReply, query: MetricQuery, sql: str, label: str, definitions: tuple[str, ...]
) -> Update:
    draft: Draft = {
        "kind": "sql",
        "explanation": reply.explanation.strip() or label.removeprefix("governed: ").capitalize(),
        "sql": sql,
        "by_model": True,
        "metric": {
            "label": label,
            "definitions": list(definitions),
            "query": query.model_dump(exclude_defaults=True),
        },
    }
    step: Step = {
        "kind": "metric",
        "text": (
            f"The model chose a metric query and MetricFlow compiled it ({label}) from the "
            "team's definitions: " + "; ".join(definitions)
        ),
        "brief": label,
    }
    return {"metric": {"used": True, "why": ""}, "draft": draft, "feedback": [], "trace": [step]}

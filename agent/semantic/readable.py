"""The part of a semantic layer a question asked as a warehouse identity (run_as) may be offered:
what the metric step shows that identity's model and accepts from it.

A semantic model is kept when its relation is one table of the identity's view of the catalog,
matched as compiling matches it (`warehouse_table`). A metric is kept when everything it is computed
from is: a simple or cumulative metric's measures must belong to kept semantic models, a ratio's or
derived metric's input metrics must be kept in turn, and every dimension or entity its filter names
must be one of a kept model (a filter on another table's dimension joins that table). A metric whose
inputs the layer does not name (a conversion metric, a measure no model defines) is left out: what
it reads cannot be told, so it is not offered (fail closed). Dimensions and entities are those of
the kept semantic models only (`SemanticLayer` derives them from its models), so neither the name,
description nor values of a hidden table's metrics or dimensions reach the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent.catalog.documentation import warehouse_table
from agent.semantic.metric_query import MetricQuery
from agent.semantic.semantic_manifest import GRAINS, SemanticLayer
from connectors.base import TableInfo

#: Metrics computed from other metrics, not from measures.
_OF_METRICS = ("ratio", "derived")
#: A name a metric's filter refers to: `{{ Dimension('customer__region') }}`, `{{
#: TimeDimension('order__ordered_at', 'month') }}`, `{{ Entity('customer') }}`.
_REFERENCE = re.compile(r"""(?:Dimension|Entity)\(\s*['"]([^'"]+)['"]""")


def _grouped_by(reference: str) -> str:
    """The dimension or entity a filter's reference names, without a grain written into it
    (`order__ordered_at__month`)."""
    name, _, grain = reference.rpartition("__")
    return name if name and grain in GRAINS else reference


def readable_layer(layer: SemanticLayer, tables: Iterable[TableInfo]) -> SemanticLayer:
    """`layer` with only the semantic models whose relation is one of `tables`, and only the
    metrics computed from those alone."""
    listed = tuple(tables)
    models = tuple(m for m in layer.models if warehouse_table(m.relation, listed) is not None)
    measures = {measure.name for model in models for measure in model.measures}
    group_by = set(SemanticLayer(models=models).group_by_names())
    kept: dict[str, bool] = {}

    def readable(name: str, seen: frozenset[str]) -> bool:
        if name in kept:
            return kept[name]
        metric = layer.metrics.get(name)
        if metric is None or not metric.inputs or name in seen:
            return False
        if metric.type in _OF_METRICS:
            ok = all(readable(i, seen | {name}) for i in metric.inputs)
        else:
            ok = all(i in measures for i in metric.inputs)
        ok = ok and all(_grouped_by(ref) in group_by for ref in _REFERENCE.findall(metric.filter))
        kept[name] = ok
        return ok

    metrics = {n: m for n, m in layer.metrics.items() if readable(n, frozenset())}
    return SemanticLayer(models=models, metrics=metrics)


def not_offered(query: MetricQuery, layer: SemanticLayer, offered: SemanticLayer) -> bool:
    """Whether `query` names a metric, dimension or entity of `layer` that `offered` (its
    `readable_layer`) leaves out. A name `layer` does not know either is left to the query's
    check, whose "did you mean" then names only what is offered."""
    known = {*layer.metrics, *layer.group_by_names()}
    allowed = {*offered.metrics, *offered.group_by_names()}
    named = [
        *query.metrics,
        *(g.name for g in query.group_by),
        *(f.name for f in query.where),
    ]
    return any(name in known and name not in allowed for name in named)

"""A dbt `semantic_manifest.json` read into a `SemanticLayer`: the team's metrics and what they
may be grouped and filtered by.

Names are those a metric query uses, as MetricFlow spells them: a dimension is named after the
primary entity of its semantic model (`customer__region`, `order__ordered_at`), a time dimension
takes a grain (`order__ordered_at__month`), and `metric_time` is every metric's own time axis. An
entity is a group-by of its own (`customer`). Entities also give join keys: a foreign entity
joins the semantic model where the same entity is primary (or unique, or natural).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from agent.catalog.documentation import JoinKey

METRIC_TIME = "metric_time"
#: The grains a metric query may ask of a time dimension, finest first.
GRAINS = ("day", "week", "month", "quarter", "year")
_KEY_TYPES = ("primary", "unique", "natural")


@dataclass(frozen=True)
class Entity:
    name: str
    type: str
    #: The column (or expression) holding the key.
    expr: str


@dataclass(frozen=True)
class Dimension:
    #: As a query names it: `customer__region`, `order__ordered_at`, `metric_time`.
    name: str
    type: str  # "categorical" or "time"
    description: str = ""
    #: The finest grain of a time dimension ("day"), else "".
    grain: str = ""
    #: The semantic model it belongs to and its column (or expression) there.
    model: str = ""
    expr: str = ""

    @property
    def is_time(self) -> bool:
        return self.type == "time"


@dataclass(frozen=True)
class Measure:
    name: str
    agg: str
    expr: str
    description: str = ""


@dataclass(frozen=True)
class SemanticModel:
    name: str
    relation: str
    description: str = ""
    entities: tuple[Entity, ...] = ()
    dimensions: tuple[Dimension, ...] = ()
    measures: tuple[Measure, ...] = ()

    @property
    def primary(self) -> Entity | None:
        return next((e for e in self.entities if e.type in _KEY_TYPES), None)


@dataclass(frozen=True)
class Metric:
    name: str
    type: str  # simple, ratio, derived, cumulative, conversion
    label: str = ""
    description: str = ""
    #: Its filter as written (`{{ Dimension('order__status') }} = 'returned'`), else "".
    filter: str = ""
    #: The measures (simple, cumulative) or metrics (ratio, derived) it is computed from.
    inputs: tuple[str, ...] = ()
    #: A derived metric's expression over its inputs (`revenue - refunds`).
    expr: str = ""
    #: Other words the team uses for it (`meta: {synonyms: [turnover]}` in its config).
    synonyms: tuple[str, ...] = ()
    #: The rest of its `meta`, kept as text.
    meta: tuple[tuple[str, str], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """What it is called: its name, label and synonyms."""
        return tuple(n for n in (self.name, self.label, *self.synonyms) if n)

    def definition(self) -> str:
        """One line saying what it is and how it is computed."""
        how = {
            "ratio": " / ".join(self.inputs),
            "derived": self.expr,
        }.get(self.type, ", ".join(self.inputs))
        text = f"{self.name} ({self.type}: {how})" if how else f"{self.name} ({self.type})"
        if self.filter:
            text += f" where {self.filter}"
        return text + (f": {self.description}" if self.description else "")


@dataclass(frozen=True)
class SemanticLayer:
    models: tuple[SemanticModel, ...] = ()
    metrics: Mapping[str, Metric] = field(default_factory=dict)

    @cached_property
    def dimensions(self) -> dict[str, Dimension]:
        """Every dimension by query name, `metric_time` first."""
        out = {METRIC_TIME: Dimension(METRIC_TIME, "time", "Each metric's own time axis.", "day")}
        for model in self.models:
            primary = model.primary
            for dimension in model.dimensions:
                name = f"{primary.name}__{dimension.name}" if primary else dimension.name
                out.setdefault(name, _named(dimension, name))
        return out

    @cached_property
    def entities(self) -> dict[str, Entity]:
        out: dict[str, Entity] = {}
        for model in self.models:
            for entity in model.entities:
                out.setdefault(entity.name, entity)
        return out

    @cached_property
    def measures(self) -> dict[str, Measure]:
        return {m.name: m for model in self.models for m in model.measures}

    def computed(self, name: str) -> str:
        """How metric `name` is computed, in SQL words where it is one measure (`SUM(amount) of
        "shop"."main"."fct_orders" where ...`), else its definition."""
        metric = self.metrics[name]
        measure = self.measures.get(metric.inputs[0]) if metric.inputs else None
        if metric.type != "simple" or measure is None:
            return metric.definition()
        model = next(m for m in self.models if measure in m.measures)
        text = f"{measure.agg.upper()}({measure.expr}) of {model.relation}"
        if metric.filter:
            text += f" where {metric.filter}"
        return text + (f": {metric.description}" if metric.description else "")

    def terms(self) -> dict[str, tuple[str, str]]:
        """Each metric's name, label and synonyms, lower-cased with `_` as spaces -> (name,
        computed)."""
        out: dict[str, tuple[str, str]] = {}
        for metric in self:
            for said in metric.names:
                out.setdefault(said.replace("_", " ").lower(), (metric.name, ""))
        return {k: (name, self.computed(name)) for k, (name, _) in out.items()}

    def group_by_names(self) -> list[str]:
        """Every name a query may group or filter by (without a grain)."""
        return [*self.dimensions, *self.entities]

    def joins(self) -> tuple[JoinKey, ...]:
        """A foreign entity -> the model where the entity is a key (semantic models' entities)."""
        keys: dict[str, tuple[SemanticModel, Entity]] = {}
        for model in self.models:
            for entity in model.entities:
                if entity.type in _KEY_TYPES:
                    keys.setdefault(entity.name, (model, entity))
        out = []
        for model in self.models:
            for entity in model.entities:
                if entity.type == "foreign" and entity.name in keys:
                    other, key = keys[entity.name]
                    out.append(
                        JoinKey(
                            model.relation, entity.expr, other.relation, key.expr,
                            f"entity {entity.name}",
                        )
                    )  # fmt: skip
        return tuple(out)

    def __iter__(self) -> Iterator[Metric]:
        return iter(self.metrics.values())


def _named(dimension: Dimension, name: str) -> Dimension:
    return Dimension(
        name, dimension.type, dimension.description, dimension.grain, dimension.model,
        dimension.expr,
    )  # fmt: skip


def _text(value: Any) -> str:
    return str(value).strip() if value else ""


def _model(raw: Mapping[str, Any]) -> SemanticModel:
    name = _text(raw.get("name"))
    relation = raw.get("node_relation") or {}
    entities = tuple(
        Entity(_text(e.get("name")), _text(e.get("type")), _text(e.get("expr") or e.get("name")))
        for e in raw.get("entities") or ()
    )
    dimensions = tuple(
        Dimension(
            name=_text(d.get("name")),
            type=_text(d.get("type")).lower(),
            description=_text(d.get("description")),
            grain=_text((d.get("type_params") or {}).get("time_granularity")),
            model=name,
            expr=_text(d.get("expr") or d.get("name")),
        )
        for d in raw.get("dimensions") or ()
    )
    measures = tuple(
        Measure(
            _text(m.get("name")), _text(m.get("agg")), _text(m.get("expr") or m.get("name")),
            _text(m.get("description")),
        )
        for m in raw.get("measures") or ()
    )  # fmt: skip
    return SemanticModel(
        name=name,
        relation=_text(relation.get("relation_name"))
        or ".".join(
            _text(relation.get(k)) for k in ("database", "schema_name", "alias") if relation.get(k)
        ),
        description=_text(raw.get("description")),
        entities=entities,
        dimensions=dimensions,
        measures=measures,
    )


def _synonyms_and_meta(
    raw: Mapping[str, Any],
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """A metric's `meta` (in its config since dbt 1.10, or beside it before): `synonyms` (a
    list, or words separated by commas) apart, the rest as text."""
    config = raw.get("config")
    meta = (config.get("meta") if isinstance(config, Mapping) else None) or raw.get("meta")
    if not isinstance(meta, Mapping):
        return (), ()
    said = meta.get("synonyms") or ()
    listed = said.split(",") if isinstance(said, str) else said if isinstance(said, list) else ()
    synonyms = tuple(s for s in (_text(s) for s in listed) if s)
    rest = tuple((str(k), _text(v)) for k, v in meta.items() if k != "synonyms" and _text(v))
    return synonyms, rest


def _metric(raw: Mapping[str, Any], described: Mapping[str, Any]) -> Metric:
    params = raw.get("type_params") or {}
    kind = _text(raw.get("type")).lower()
    inputs: list[str] = []
    if kind in ("ratio",):
        inputs = [_text((params.get(k) or {}).get("name")) for k in ("numerator", "denominator")]
    elif kind == "derived":
        inputs = [_text(m.get("name")) for m in params.get("metrics") or ()]
    elif isinstance(params.get("measure"), Mapping):
        inputs = [_text(params["measure"].get("name"))]
    filters = (raw.get("filter") or {}).get("where_filters") or ()
    synonyms, meta = _synonyms_and_meta(raw)
    if not (synonyms or meta) and isinstance(described, Mapping):
        synonyms, meta = _synonyms_and_meta(described)
    return Metric(
        name=_text(raw.get("name")),
        type=kind,
        label=_text(raw.get("label")),
        description=_text(raw.get("description")),
        filter=" AND ".join(_text(f.get("where_sql_template")) for f in filters),
        inputs=tuple(i for i in inputs if i),
        expr=_text(params.get("expr")),
        synonyms=synonyms,
        meta=meta,
    )


def read_semantic_manifest(
    manifest: Mapping[str, Any], dbt_manifest: Mapping[str, Any] | None = None
) -> SemanticLayer:
    """The semantic layer a parsed `semantic_manifest.json` holds. dbt 1.11 leaves the metrics'
    `meta` out of that file; it is read from the metrics of `dbt_manifest` (manifest.json)."""
    described = {
        str(m.get("name")): m
        for m in ((dbt_manifest or {}).get("metrics") or {}).values()
        if isinstance(m, Mapping)
    }
    models = tuple(_model(m) for m in manifest.get("semantic_models") or () if m.get("name"))
    metrics = {
        metric.name: metric
        for metric in (
            _metric(m, described.get(str(m.get("name")), {})) for m in manifest.get("metrics") or ()
        )
        if metric.name
    }
    return SemanticLayer(models=models, metrics=metrics)

"""A dbt `manifest.json` read into `Documentation`: what the team wrote about its models.

Read from each model node: its description (docs blocks are already rendered into it by dbt),
its columns' descriptions and `meta`, the relation it builds (`relation_name`) and its name.
From the data tests attached to models: `accepted_values` gives the column's value list, and
`relationships` (`to: ref('dim_customers')`, `field: customer_id`) a join key. Sources are read
like models (their tests and descriptions too). Anything else in the manifest is left alone;
an entry that does not have the expected shape is skipped, never fatal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agent.catalog.documentation import ColumnDoc, Documentation, JoinKey, TableDoc
from agent.catalog.profiling import table_key

#: `ref('name')`, `ref("package", "name")`, `source('src', 'table')` in a relationships test.
_REF = re.compile(r"""^\s*(ref|source)\(\s*(['"][^'"]+['"](?:\s*,\s*['"][^'"]+['"])*)\s*\)\s*$""")

_DOCUMENTED = ("model", "seed", "snapshot")


def _meta(raw: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, Mapping):
        return ()
    return tuple((str(k), str(v)) for k, v in raw.items() if v not in (None, "", [], {}))


def _node_meta(node: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    config = node.get("config")
    config_meta = config.get("meta") if isinstance(config, Mapping) else None
    return _meta(node.get("meta") or config_meta)


def _relation(node: Mapping[str, Any]) -> str:
    relation = node.get("relation_name")
    if isinstance(relation, str) and relation:
        return relation
    parts = [node.get("database"), node.get("schema"), node.get("alias") or node.get("name")]
    return ".".join(str(p) for p in parts if p)


def _table(node: Mapping[str, Any]) -> TableDoc:
    columns = {}
    for name, column in (node.get("columns") or {}).items():
        if isinstance(column, Mapping):
            columns[str(name).lower()] = ColumnDoc(
                description=str(column.get("description") or "").strip(),
                meta=_node_meta(column),
            )
    relation = _relation(node)
    name = str(node.get("name") or "")
    model = name if name and name.lower() != table_key(relation).rsplit(".", 1)[-1] else ""
    return TableDoc(
        relation=relation,
        description=str(node.get("description") or "").strip(),
        model=model,
        columns=columns,
        meta=_node_meta(node),
    )


def _target(text: str, nodes: Mapping[str, str], sources: Mapping[str, str]) -> str | None:
    """The relation `ref('x')` or `source('s', 't')` names, by the manifest's own nodes."""
    found = _REF.match(text)
    if found is None:
        return None
    args = [a.strip().strip("'\"") for a in found.group(2).split(",")]
    if found.group(1) == "ref":
        return nodes.get(args[-1])
    return sources.get(".".join(args[-2:])) if len(args) >= 2 else None


def read_manifest(manifest: Mapping[str, Any], *, source: str = "") -> Documentation:
    """The documentation a parsed `manifest.json` holds (see the module docstring)."""
    tables: dict[str, TableDoc] = {}  # by unique_id
    by_name: dict[str, str] = {}  # model name -> relation
    by_source: dict[str, str] = {}  # "source_name.table" -> relation
    for unique_id, node in (manifest.get("nodes") or {}).items():
        if isinstance(node, Mapping) and node.get("resource_type") in _DOCUMENTED:
            tables[unique_id] = _table(node)
            by_name[str(node.get("name"))] = tables[unique_id].relation
    for unique_id, node in (manifest.get("sources") or {}).items():
        if isinstance(node, Mapping):
            tables[unique_id] = _table(node)
            by_source[f"{node.get('source_name')}.{node.get('name')}"] = tables[unique_id].relation
    joins: list[JoinKey] = []
    for node in (manifest.get("nodes") or {}).values():
        if not isinstance(node, Mapping) or node.get("resource_type") != "test":
            continue
        test = node.get("test_metadata") or {}
        kwargs = test.get("kwargs") or {}
        attached = node.get("attached_node") or next(
            iter((node.get("depends_on") or {}).get("nodes") or ()), None
        )
        column = kwargs.get("column_name") or node.get("column_name")
        if attached not in tables or not isinstance(column, str):
            continue
        table = tables[attached]
        if test.get("name") == "accepted_values" and isinstance(kwargs.get("values"), list):
            values = tuple(str(v) for v in kwargs["values"])
            key = column.lower()
            old = table.columns.get(key, ColumnDoc())
            columns = {**table.columns, key: replace(old, values=values)}
            tables[attached] = replace(table, columns=columns)
        elif test.get("name") == "relationships" and isinstance(kwargs.get("to"), str):
            other = _target(kwargs["to"], by_name, by_source)
            field = kwargs.get("field")
            if other is not None and isinstance(field, str):
                joins.append(JoinKey(table.relation, column, other, field, "relationships test"))
    documented = {table_key(t.relation): t for t in tables.values()}
    return Documentation(tables=documented, joins=tuple(joins), source=source)

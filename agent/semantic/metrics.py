"""A warehouse's metrics, as the graph's metric step uses them: the semantic layer of its dbt
project, and MetricFlow compiling for the warehouse's dialect.

MetricFlow (the optional `dbt` extra) is imported on first use only, so a deployment without the
extra, or whose warehouse MetricFlow writes no SQL for, has no metric step (`cannot_compile` says
why) and answers with SQL as before; a project without metrics skips the step until a new
`dbt parse` adds some (`unavailable`). The compiler is built again when the artifacts change.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import TYPE_CHECKING

from agent.catalog.documentation import Documentation
from agent.catalog.glossary import Glossary
from agent.catalog.retrieval import words
from agent.semantic.artifacts import Artifacts, ProjectArtifacts
from agent.semantic.metric_query import MetricQuery
from agent.semantic.semantic_manifest import SemanticLayer
from connectors.base import TableInfo

if TYPE_CHECKING:
    from agent.semantic.compile import CompiledMetricQuery, MetricCompiler

#: MetricFlow's dialects (the compiler's `_ENGINES`), without importing it.
DIALECTS = frozenset(
    {"duckdb", "postgres", "bigquery", "snowflake", "databricks", "redshift", "trino"}
)


def named_in(question: str, layer: SemanticLayer, glossary: Glossary | None = None) -> list[str]:
    """The metrics `question` names, in the layer's order: by their name, label or a synonym
    (each as words, lightly stemmed, all in the question), by every word of their description
    ("revenue per order" for one described as "Revenue per order."), or through a glossary term
    the question uses whose term or an alias is one ("sales" listed as an alias of revenue).

    The metric step asks the model only when a metric is named, and keeps its choice only when
    every metric chosen is named (or answered the question before): a question's words, not
    the model, decide that a metric is asked for."""
    asked = set(words(question))
    found = []
    for metric in layer:
        said = [words(name.replace("_", " ")) for name in metric.names]
        said.append(words(metric.description))
        if any(s and set(s) <= asked for s in said):
            found.append(metric.name)
    if glossary is not None:
        terms = layer.terms()
        for term in glossary.matching(question):
            for word in (term.term, *term.aliases):
                name = terms.get(word.replace("_", " ").lower(), ("", ""))[0]
                if name and name not in found:
                    found.append(name)
    return found


class Metrics:
    """The metric layer of one warehouse (thread-safe)."""

    def __init__(self, project: ProjectArtifacts, dialect: str) -> None:
        self.project = project
        self.dialect = dialect
        self._lock = threading.Lock()
        self._compiler: tuple[Artifacts, tuple[TableInfo, ...], MetricCompiler] | None = None

    def cannot_compile(self) -> str:
        """Why MetricFlow cannot compile for this warehouse ("" when it can): what holds for
        the process's life, whatever the project's files become."""
        if self.dialect not in DIALECTS:
            return f"MetricFlow writes no SQL for {self.dialect}"
        if importlib.util.find_spec("metricflow") is None:
            return "MetricFlow is not installed (install querybot[dbt])"
        return ""

    def unavailable(self) -> str:
        """Why there are no metric questions now ("" when there are)."""
        if self.project.current().semantic is None:
            return "its dbt project defines no metrics"
        return self.cannot_compile()

    @property
    def layer(self) -> SemanticLayer | None:
        return self.project.current().semantic

    @property
    def documentation(self) -> Documentation:
        return self.project.current().documentation

    def mentioned(self, question: str, glossary: Glossary | None = None) -> list[str]:
        """The metrics the question names (`named_in`)."""
        layer = self.layer
        return named_in(question, layer, glossary) if layer is not None else []

    def compile(
        self,
        query: MetricQuery,
        tables: tuple[TableInfo, ...] = (),
        offered: SemanticLayer | None = None,
    ) -> CompiledMetricQuery:
        """The SQL of `query`, naming the warehouse's `tables` as it does (MetricQueryError
        saying what to change), checked against `offered` (default: the whole layer)."""
        from agent.semantic.compile import MetricCompiler

        artifacts = self.project.current()
        with self._lock:
            cached = self._compiler
            if cached is None or cached[0] is not artifacts or cached[1] != tables:
                assert artifacts.semantic is not None
                compiler = MetricCompiler(
                    artifacts.semantic_json, artifacts.semantic, self.dialect, tables
                )
                cached = self._compiler = (artifacts, tables, compiler)
        return cached[2].compile(query, artifacts.documentation, offered)

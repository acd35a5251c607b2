"""What the graph's nodes need besides the state: the warehouse, the model, limits, the catalog."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig

from agent.audit import AuditLog
from agent.gate import GateSchema
from agent.reply import SqlReply
from connectors.base import Connector, TableInfo


@dataclass(frozen=True)
class Limits:
    """Deterministic limits applied by code, whatever the model writes."""

    #: LIMIT the gate adds or tightens on every statement.
    row_limit: int = 1000
    #: Rows of a result kept in the answer (for tables in Slack and the terminal).
    answer_rows: int = 100
    query_timeout_s: float = 60.0
    #: Model attempts per question before the bot gives up, and execution errors it repairs.
    max_attempts: int = 3
    #: Questions longer than this are refused before any model call.
    max_question_chars: int = 4000
    #: Earlier turns of a thread shown to the model.
    history_turns: int = 5


@dataclass
class Catalog:
    """The connector's tables and the gate's schema, read once and shared by all threads."""

    connector: Connector
    _tables: list[TableInfo] | None = None
    _gate: GateSchema | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _load(self) -> None:
        with self._lock:
            if self._tables is None:
                tables = self.connector.list_tables()
                self._gate = GateSchema.from_tables(tables, self.connector.dialect)
                self._tables = tables

    @property
    def tables(self) -> list[TableInfo]:
        self._load()
        assert self._tables is not None
        return self._tables

    @property
    def gate_schema(self) -> GateSchema:
        self._load()
        assert self._gate is not None
        return self._gate


def thread_of(config: RunnableConfig) -> str:
    """The conversation a node runs for (for the audit log)."""
    return str(config["configurable"]["thread_id"])


@dataclass
class AgentDeps:
    """Everything the nodes use, built once per process."""

    connector: Connector
    model: BaseChatModel
    limits: Limits = field(default_factory=Limits)
    audit: AuditLog = field(default_factory=AuditLog)
    catalog: Catalog = field(init=False)

    structured_model: Runnable = field(init=False)

    def __post_init__(self) -> None:
        self.catalog = Catalog(self.connector)
        # include_raw keeps parse failures (and token usage) instead of raising
        self.structured_model = self.model.with_structured_output(SqlReply, include_raw=True)

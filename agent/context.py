"""What the graph's nodes need besides the state: the warehouse, the model, limits, the catalog."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel

from agent.catalog.access import Access
from agent.catalog.date_range import DateRange, DateRanges
from agent.catalog.glossary import Glossary
from agent.catalog.snapshot import Catalog, CatalogSnapshot, table_key
from agent.memory.audit import AuditLog
from agent.memory.examples import ExampleStore
from agent.memory.failures import FailureStore
from agent.model.errors import is_retryable
from agent.model.providers import structured_method
from agent.model.question_context import ContextBuilder, ContextLimits
from agent.model.reply import MetricReply, SqlRepair, SqlReply
from agent.model.text_reply import text_replies
from agent.reference_day import today
from agent.semantic.artifacts import ProjectArtifacts
from agent.semantic.metrics import Metrics
from agent.semantic.readable import readable_layer
from connectors.allowlist import TableAllowlist
from connectors.base import Connector, ConnectorError, TableInfo

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AgentLimits:
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
    #: Profile column values in the background (queries through `connector.run`) and check
    #: literal filters live when no full value list is known. Off: descriptions only, and
    #: grounding uses nothing but profiles already known.
    profile_values: bool = False
    #: Age after which the catalog is re-read (in the background).
    catalog_ttl_s: float = 3600.0
    #: Calls per model request when it fails in a way worth retrying (rate limit, quota, 5xx,
    #: timeout: `is_retryable`), and the first wait between them (doubling, jittered).
    model_attempts: int = 3
    model_backoff_s: float = 2.0
    #: Functions the gate accepts besides the dialect's known pure ones: the deployment's own
    #: (`QUERYBOT_ALLOWED_FUNCTIONS`), each `name` or `schema.name`.
    allowed_functions: tuple[str, ...] = ()
    #: Types the gate accepts besides the dialect's built-in ones: the deployment's own
    #: (`QUERYBOT_ALLOWED_TYPES`), each `name` or `schema.name`.
    allowed_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class Strategies:
    """Answer-quality steps a team switches on or off, each paid for in model calls (or clicks).

    `relax_empty`: a result with no rows, or only NULLs, is followed by a loosened version of the
    query (no model call) that needs its own approval. `follow_ups`: an answer carries up to three
    suggested follow-up questions (no model call).

    Model-side strategies (`parse_strategies` reads `QUERYBOT_STRATEGIES`; the README's
    "Answer-quality strategies" gives their costs): `plan` (a plan with grounded filter values
    before the SQL: one call), `self_check` (a second call judges the accepted SQL),
    `candidates` (N drafts at once, those passing the checks first, then by agreement: N calls
    instead of one), `variations` (paraphrases widen table retrieval: one call, only when the
    warehouse is too big to show whole), `remember_failures` (past errors become "avoid" hints:
    no call), `redraft` (a draft refused for naming tables or columns the warehouse lacks is
    written afresh, in text, instead of corrected: no extra call, it takes a repair's place),
    `ask_unmatched` (a question none of whose words occurs in a warehouse shown whole gets a
    clarifying reply from code: no call; the match step), `ask_vague` (a question ranking or
    qualifying by a vague word, "the most valuable customers", with no measure stated or
    defined by the warehouse, is asked which measure it means, offering the warehouse's own:
    no call; the match step).
    """

    relax_empty: bool = True
    follow_ups: bool = True
    plan: bool = False
    self_check: bool = False
    candidates: int = 1
    variations: int = 0
    remember_failures: bool = True
    redraft: bool = True
    ask_unmatched: bool = True
    ask_vague: bool = True


def thread_of(config: RunnableConfig) -> str:
    """The conversation a node runs for (for the audit log)."""
    return str(config["configurable"]["thread_id"])


@dataclass
class AgentDeps:
    """Everything the nodes use, built once per process."""

    connector: Connector
    model: BaseChatModel
    limits: AgentLimits = field(default_factory=AgentLimits)
    audit: AuditLog = field(default_factory=AuditLog)
    #: Verified question -> SQL examples learnt from approved runs.
    examples: ExampleStore = field(default_factory=ExampleStore)
    glossary: Glossary | None = None
    context_limits: ContextLimits = field(default_factory=ContextLimits)
    strategies: Strategies = field(default_factory=Strategies)
    #: The model of the self-check strategy (`QUERYBOT_CHECK_MODEL`); None: `model`.
    check_model: BaseChatModel | None = None
    #: SQL errors and gate rejections remembered per warehouse (the remember-failures strategy).
    failures: FailureStore = field(default_factory=FailureStore)
    #: The warehouse's dbt project (QUERYBOT_DBT_PROJECT), read again when its files change.
    project: ProjectArtifacts | None = None
    #: Every query must run as the asker's identity (the deployment maps people to warehouse
    #: identities): a proposal naming none is never run.
    run_as_required: bool = False
    #: The day questions are asked on when pinned (QUERYBOT_TODAY, a golden set's `today:`):
    #: the model is told it and SQL reading the clock reads it (`agent.reference_day`); None:
    #: the real date, read at each question.
    pinned_today: dt.date | None = None
    catalog: Catalog = field(init=False)
    #: The dates the data's date columns cover, read once per catalog (`date_ranges`).
    dates: DateRanges = field(init=False, default_factory=DateRanges)
    #: What a question asked as a warehouse identity may show its model.
    access: Access = field(init=False)
    context: ContextBuilder = field(init=False)
    #: The project's metrics, where MetricFlow can compile for this warehouse (the metric step
    #: skips while the project defines none); None: every answer is SQL the model writes.
    metrics: Metrics | None = field(init=False, default=None)
    #: The same model answering the metric step (agent.model.reply.MetricReply).
    metric_model: Runnable | None = field(init=False, default=None)

    structured_model: Runnable = field(init=False)
    #: The same model answering a repair request: SQL only (agent.model.reply.SqlRepair).
    repair_model: Runnable = field(init=False)
    #: The same model writing a refused draft afresh, in text (agent.model.text_reply).
    redraft_model: Runnable = field(init=False)

    def __post_init__(self) -> None:
        self.context = ContextBuilder(
            glossary=self.glossary,
            examples=self.examples,
            limits=self.context_limits,
            metric_terms=self._metric_terms if self.project is not None else None,
            # querybot's own table lists give each identity whole tables, the rows the login
            # reads: elsewhere the engine may filter rows per identity (row-level security)
            shared_examples=isinstance(self.connector, TableAllowlist),
        )
        self.catalog = Catalog(
            self.connector,
            ttl_s=self.limits.catalog_ttl_s,
            profile=self.limits.profile_values,
            on_refresh=self._on_refresh,
            functions=self.limits.allowed_functions,
            types=self.limits.allowed_types,
            documentation=self.project.documentation if self.project else None,
        )
        self.access = Access(self.connector)
        self.structured_model = self.structured(SqlReply)
        self.repair_model = self.structured(SqlRepair)
        self.redraft_model = self.retried(text_replies(self.model))
        if self.project is not None:
            metrics = Metrics(self.project, self.connector.dialect)
            why_not = metrics.cannot_compile()
            if why_not:
                log.info("No metric questions on %s: %s", self.connector.name, why_not)
            else:
                self.metrics = metrics
                self.metric_model = self.structured(MetricReply)

    def today(self) -> dt.date:
        """The day questions are asked on: the pinned one, else the real date. Every step that
        tells the model today's date reads it here."""
        return today(self.pinned_today)

    def date_ranges(self, tables: Sequence[str], identity: str) -> tuple[DateRange, ...]:
        """What the date columns of `tables` (qualified names) cover, read through the
        connector where values may be checked live (`live`: profiling on, no identity), else
        none. Never raises: a warehouse that cannot say gives none."""
        connector = self.live(identity)
        if connector is None:
            return ()
        try:
            known = self.catalog.snapshot().by_key
        except ConnectorError:
            return ()
        shown = [known[key] for key in map(table_key, tables) if key in known]
        return self.dates.of(connector, shown)

    def visible(self, identity: str) -> CatalogSnapshot:
        """The catalog as a question asked as `identity` may see it: every step that shows the model
        tables, values or examples, or checks a draft, reads this. Raises ConnectorError when it
        cannot be read or the warehouse cannot say what `identity` may read."""
        return self.access.view(self.catalog.snapshot(), identity)

    def remembers_failures(self, identity: str) -> bool:
        """Whether the remember-failures strategy records and shows mistakes for a question
        asked as `identity`: never under one, since a remembered problem quotes SQL and engine
        messages (a filter value, a table) that may be that identity's alone."""
        return self.strategies.remember_failures and not identity

    def live(self, identity: str) -> Connector | None:
        """The connector to check filter values against live (`check_values`), or None:
        only when profiling is on, and never under an identity (the login's queries see rows
        the identity may not)."""
        return self.connector if self.limits.profile_values and not identity else None

    def structured(self, schema: type[BaseModel], model: BaseChatModel | None = None) -> Runnable:
        """`model` (default: the main one) answering as `schema`, with the retry policy."""
        # include_raw keeps parse failures (and token usage) instead of raising; a rate limit,
        # an outage or a timeout is retried a bounded number of times, a bad key never
        chosen = model or self.model
        method = structured_method(chosen)
        options = {"method": method} if method else {}
        return self.retried(chosen.with_structured_output(schema, include_raw=True, **options))

    def retried(self, runnable: Runnable) -> Runnable:
        """`runnable` with the agent's one retry policy (the SDKs' own retries are off)."""
        return runnable.with_retry(
            retry_if_exception_type=is_retryable,
            stop_after_attempt=self.limits.model_attempts,
            exponential_jitter_params={
                "initial": self.limits.model_backoff_s,
                "max": 8 * self.limits.model_backoff_s,
                "jitter": self.limits.model_backoff_s / 2,
            },
        )

    def _metric_terms(self, tables: Sequence[TableInfo] | None) -> dict[str, tuple[str, str]]:
        """The project's metrics by name and label (none when it defines none); given an
        identity's `tables`, only those computed from them."""
        layer = self.project.current().semantic if self.project is not None else None
        if layer is not None and tables is not None:
            layer = readable_layer(layer, tables)
        return layer.terms() if layer is not None else {}

    def _on_refresh(self, snapshot: CatalogSnapshot) -> None:
        """A new snapshot: retire examples that no longer fit it, build its search index."""
        self.examples.retire_missing(snapshot)
        self.context.warm(snapshot)
        self.dates.clear()

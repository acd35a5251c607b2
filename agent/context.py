"""What the graph's nodes need besides the state: the warehouse, the model, limits, the catalog."""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel

from agent.audit import AuditLog
from agent.catalog import Catalog, CatalogSnapshot
from agent.examples import ExampleStore
from agent.failures import FailureStore
from agent.glossary import Glossary
from agent.model_errors import is_retryable
from agent.models import structured_method
from agent.question_context import ContextBuilder, ContextLimits
from agent.reply import SqlRepair, SqlReply
from connectors.base import Connector


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
    #: Profile column values in the background (queries through `connector.run`) and check
    #: literal filters live when no full value list is known. Off: descriptions only, and
    #: grounding uses nothing but profiles already known.
    profile_values: bool = False
    #: Age after which the catalog is re-read (in the background).
    catalog_ttl_s: float = 3600.0
    #: Calls per model request when it fails in a way worth retrying (rate limit, quota, 5xx,
    #: timeout; agent/model_errors.py), and the first wait between them (doubling, jittered).
    model_attempts: int = 3
    model_backoff_s: float = 2.0
    #: Functions the gate accepts besides the dialect's known pure ones: the deployment's own
    #: (`QUERYBOT_ALLOWED_FUNCTIONS`), each `name` or `schema.name`.
    allowed_functions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Strategies:
    """Answer-quality steps a team switches on or off, each paid for in model calls (or clicks).

    `relax_empty`: a result with no rows, or only NULLs, is followed by a loosened version of the
    query (agent/relax.py, no model call) that needs its own approval. `follow_ups`: an answer
    carries up to three suggested follow-up questions (agent/followups.py, no model call).

    Model-side strategies (agent/strategies.py parses `QUERYBOT_STRATEGIES`; the README's
    "Answer-quality strategies" gives their costs): `plan` (a plan with grounded filter values
    before the SQL: one call), `self_check` (a second call judges the accepted SQL),
    `candidates` (N drafts at once, those passing the checks first, then by agreement: N calls
    instead of one), `variations` (paraphrases widen table retrieval: one call, only when the
    warehouse is too big to show whole), `remember_failures` (past errors become "avoid" hints:
    no call).
    """

    relax_empty: bool = True
    follow_ups: bool = True
    plan: bool = False
    self_check: bool = False
    candidates: int = 1
    variations: int = 0
    remember_failures: bool = True


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
    #: Verified question -> SQL examples learnt from approved runs.
    examples: ExampleStore = field(default_factory=ExampleStore)
    glossary: Glossary | None = None
    context_limits: ContextLimits = field(default_factory=ContextLimits)
    strategies: Strategies = field(default_factory=Strategies)
    #: The model of the self-check strategy (`QUERYBOT_CHECK_MODEL`); None: `model`.
    check_model: BaseChatModel | None = None
    #: SQL errors and gate rejections remembered per warehouse (the remember-failures strategy).
    failures: FailureStore = field(default_factory=FailureStore)
    catalog: Catalog = field(init=False)
    context: ContextBuilder = field(init=False)

    structured_model: Runnable = field(init=False)
    #: The same model answering a repair request: SQL only (agent.reply.SqlRepair).
    repair_model: Runnable = field(init=False)

    def __post_init__(self) -> None:
        self.context = ContextBuilder(
            glossary=self.glossary, examples=self.examples, limits=self.context_limits
        )
        self.catalog = Catalog(
            self.connector,
            ttl_s=self.limits.catalog_ttl_s,
            profile=self.limits.profile_values,
            on_refresh=self._on_refresh,
            functions=self.limits.allowed_functions,
        )
        self.structured_model = self.structured(SqlReply)
        self.repair_model = self.structured(SqlRepair)

    def structured(self, schema: type[BaseModel], model: BaseChatModel | None = None) -> Runnable:
        """`model` (default: the main one) answering as `schema`, with the retry policy."""
        # include_raw keeps parse failures (and token usage) instead of raising; a rate limit,
        # an outage or a timeout is retried a bounded number of times, a bad key never
        chosen = model or self.model
        method = structured_method(chosen)
        options = {"method": method} if method else {}
        structured = chosen.with_structured_output(schema, include_raw=True, **options)
        return structured.with_retry(
            retry_if_exception_type=is_retryable,
            stop_after_attempt=self.limits.model_attempts,
            exponential_jitter_params={
                "initial": self.limits.model_backoff_s,
                "max": 8 * self.limits.model_backoff_s,
                "jitter": self.limits.model_backoff_s / 2,
            },
        )

    def _on_refresh(self, snapshot: CatalogSnapshot) -> None:
        """A new snapshot: retire examples that no longer fit it, build its search index."""
        self.examples.retire_missing(snapshot)
        self.context.warm(snapshot)

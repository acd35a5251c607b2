"""Build the objects a process needs from its settings: the one place they are put together
(shared by the bot and the terminal).

A `Deployment` holds what every agent of the process shares: the model, the limits, the audit
log and the LangGraph checkpointer (thread ids are unique per Slack thread, so one checkpointer
serves every warehouse). It builds one Agent per configured warehouse (`open_warehouses`), and
an Agent over any other connector on request (`agent_for`, e.g. a thread's own sandbox).

For the Slack bot, `serving` opens what it serves from (the Router over the warehouses and the
threads' sandboxes, the store of proposals), and `wire` builds on the app's Slack client what its
listeners act through: the conversations and their collaborators, who may decide, which channels
are answered, the loader of shared files. Their modules are imported there, not here: `querybot
ask`, `doctor`, `eval` and `gate` use this module without Slack or the sandboxes (DuckDB).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver

from agent.catalog.glossary import Glossary, GlossaryError
from agent.context import AgentDeps, AgentLimits
from agent.conversation import Agent, postgres_checkpointer, sqlite_checkpointer
from agent.memory.audit import AuditLog
from agent.memory.examples import ExampleStore
from agent.memory.failures import FailureStore
from agent.memory.storage import PostgresStorage, Storage
from agent.model.providers import load_model
from agent.semantic.artifacts import DbtProjectError, ProjectArtifacts
from bot.access.run_as import with_identities
from bot.config import DeploymentConfig, Warehouse, WarehouseError, deployment_config
from bot.settings import Settings, SettingsError
from bot.store.base import Store
from connectors import open_connector
from connectors.base import Connector, ConnectorError

if TYPE_CHECKING:
    from slack_sdk import WebClient

    from bot.conversations.conversations import Conversations
    from bot.conversations.work import Work
    from bot.files.sandboxes import SandboxAgents
    from bot.listeners.querybot import Querybot
    from bot.routing import Router

log = logging.getLogger(__name__)

#: Connectors whose values `QUERYBOT_PROFILE_VALUES=auto` leaves unprofiled: on BigQuery and
#: Snowflake the profiling scans cost money (bytes billed, warehouse credits); Looker refuses the
#: plain aggregates profiling sends (measures may only appear inside AGGREGATE()), and its
#: connector shows sample rows instead.
NOT_PROFILED = frozenset({"bigquery", "looker", "snowflake"})


class Deployment:
    """The shared parts of every agent in one process, and the agents built on them.

    Building it checks the settings, loads the model and opens the thread store; it opens no
    warehouse. Errors raised (SettingsError, ModelConfigError, StateDatabaseError) carry
    messages written for the person starting the bot.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        config: DeploymentConfig | None = None,
        env: Mapping[str, str] | None = None,
        model: BaseChatModel | None = None,
    ) -> None:
        if model is None:  # `model`: one the caller built (the terminal's demo or keyless one)
            settings.require(*settings.model_secrets())
        self.settings = settings
        self.config = config or deployment_config(settings, os.environ if env is None else env)
        try:
            self.glossary = Glossary.load(settings.glossary) if settings.glossary else None
        except GlossaryError as exc:
            raise SettingsError(f"QUERYBOT_GLOSSARY: {exc}") from exc
        timeout_s = settings.model_timeout_s
        self.model: BaseChatModel = model or load_model(settings.model, timeout_s=timeout_s)
        self.strategies = settings.parsed_strategies()
        self.check_model = (
            load_model(settings.check_model, timeout_s=timeout_s) if settings.check_model else None
        )
        self.limits = AgentLimits(
            row_limit=settings.row_limit,
            # the answer keeps the whole capped result, so the CSV in the thread holds all of it
            answer_rows=settings.row_limit,
            query_timeout_s=settings.query_timeout_s,
            max_attempts=settings.max_repairs,
            model_backoff_s=settings.model_backoff_s,
            allowed_functions=settings.allowed_functions,
            allowed_types=settings.allowed_types,
        )
        #: With QUERYBOT_STATE_URL, the database (one pool) of the audit log, the examples and
        #: the failures of every warehouse, so replicas share what they record and learn.
        self.state: Storage | None = (
            PostgresStorage(settings.state_url) if settings.state_url else None
        )
        self.audit = AuditLog(self.state or settings.audit_db)
        self.checkpointer: BaseCheckpointSaver
        if settings.state_url:
            # Pools of a fixed size, whatever settings.workers is (`POOL_SIZE` says why).
            self.checkpointer = postgres_checkpointer(settings.state_url)
        else:
            self.checkpointer = sqlite_checkpointer(settings.state_db)
        #: Agents of the configured warehouses opened so far, by name.
        self.agents: dict[str, Agent] = {}

    def agent_for(
        self,
        connector: Connector,
        *,
        name: str,
        limits: AgentLimits | None = None,
        examples: ExampleStore | None = None,
        failures: FailureStore | None = None,
        project: ProjectArtifacts | None = None,
        run_as_required: bool = False,
    ) -> Agent:
        """An Agent over `connector` sharing this deployment's model, audit log and
        checkpointer. `name` is for logs; `limits` default to the deployment's (value profiling
        on except for NOT_PROFILED, as QUERYBOT_PROFILE_VALUES says); `examples` default to an
        in-memory store (nothing learnt outlives the process). The caller closes `connector`.
        """
        chosen = limits or self.limits
        profile = self.settings.profile_values == "on" or (
            self.settings.profile_values == "auto" and connector.name not in NOT_PROFILED
        )
        deps = AgentDeps(
            connector=connector,
            model=self.model,
            limits=replace(chosen, profile_values=profile),
            audit=self.audit,
            examples=examples or ExampleStore(),
            glossary=self.glossary,
            strategies=self.strategies,
            check_model=self.check_model,
            failures=failures or FailureStore(),
            project=project,
            run_as_required=run_as_required,
            pinned_today=self.settings.today,
        )
        log.info("Agent %r over %s ready", name, connector.name)
        return Agent(deps, self.checkpointer)

    def open_warehouse(self, warehouse: Warehouse) -> Agent:
        """The Agent of a configured warehouse, opened once. Raises WarehouseError naming it."""
        if warehouse.name in self.agents:
            return self.agents[warehouse.name]
        project = None
        if warehouse.dbt_project is not None:
            try:
                project = ProjectArtifacts(warehouse.dbt_project)
            except DbtProjectError as exc:
                raise WarehouseError(f"Warehouse {warehouse.name!r}: dbt project: {exc}") from exc
        connector = open_configured(warehouse, self.config, self.settings)
        if warehouse.run_as is not None:
            try:
                key = f"{self.config.path}: warehouses.{warehouse.name}.run_as"
                connector = with_identities(connector, warehouse.run_as, key)
            except BaseException:
                connector.close()
                raise
        row_limit = warehouse.row_limit or self.limits.row_limit
        limits = replace(
            self.limits,
            row_limit=row_limit,
            answer_rows=row_limit,
            query_timeout_s=warehouse.query_timeout_s or self.limits.query_timeout_s,
        )
        agent = self.agent_for(
            connector,
            name=warehouse.name,
            limits=limits,
            examples=ExampleStore(
                self.state or self.examples_path(warehouse.name), warehouse=warehouse.name
            ),
            failures=FailureStore(
                self.state or self.failures_path(warehouse.name), warehouse=warehouse.name
            ),
            project=project,
            run_as_required=warehouse.run_as is not None,
        )
        self.agents[warehouse.name] = agent
        agent.deps.catalog.start()  # tables, gate schema, index: built now, not on a question
        return agent

    def open_warehouses(self) -> dict[str, Agent]:
        """Open every configured warehouse (closing those opened when one fails)."""
        try:
            for warehouse in self.config.warehouses.values():
                self.open_warehouse(warehouse)
        except BaseException:
            self.close()
            raise
        return dict(self.agents)

    def examples_path(self, name: str) -> Path:
        """Each warehouse learns its own examples (they name its tables): in a file of its own,
        or, with QUERYBOT_STATE_URL, in rows naming it."""
        return warehouse_file(self.settings, self.config, "examples", name)

    def failures_path(self, name: str) -> Path:
        """Remembered failures (`FailureStore`), kept per warehouse like the examples."""
        return warehouse_file(self.settings, self.config, "failures", name)

    def close(self) -> None:
        """Let background catalog refreshes end, then close every warehouse it opened.

        A refresh still running in DuckDB when the interpreter shuts down aborts the process
        ("exception not rethrown"), so each is waited for first.
        """
        agents, self.agents = self.agents, {}
        for name, agent in agents.items():
            try:
                agent.close()
            except Exception:
                log.exception("Closing warehouse %r failed", name)


def warehouse_file(settings: Settings, config: DeploymentConfig, stem: str, name: str) -> Path:
    """A per-warehouse SQLite file in the data directory: `STEM-NAME.sqlite` with a config file,
    `STEM.sqlite` for the one warehouse without (as before config files existed)."""
    suffix = f"-{name}" if config.path is not None else ""
    return settings.data_dir / f"{stem}{suffix}.sqlite"


def open_configured(
    warehouse: Warehouse, config: DeploymentConfig, settings: Settings
) -> Connector:
    """Open a configured warehouse's connector. Raises WarehouseError (or SettingsError for a
    spec no connector takes) naming the warehouse, and the config file when there is one."""
    where = (
        f"Warehouse {warehouse.name!r} ({config.path})"
        if config.path
        else f"QUERYBOT_WAREHOUSE={warehouse.shown_spec!r}"
    )
    try:
        return open_connector(
            warehouse.spec,
            data_dir=settings.data_dir,
            limits=settings.limits,
            settings=settings,
            today=settings.today,
        )
    except ConnectorError as exc:
        raise WarehouseError(
            f"{where} cannot be used: {exc.message}",
            hint=exc.hint or "Run `querybot doctor` for details.",
            engine_message=exc.engine_message,
        ) from exc
    except ValueError as exc:
        key = f"warehouses.{warehouse.name}.spec: " if config.path else ""
        raise SettingsError(f"{where}: {key}{exc}") from exc


def open_store(settings: Settings) -> Store:
    """The store `QUERYBOT_STATE_URL` names (PostgreSQL), else SQLite in the data directory."""
    if settings.state_url:
        from bot.store.postgres import PostgresStore

        store = PostgresStore(settings.state_url)
        store.proof_wait_s = settings.recover_every_s / 2
        return store
    from bot.store.sqlite import SqliteStore

    return SqliteStore(settings.state_db)


def sandbox_agents(deployment: Deployment) -> SandboxAgents:
    """Sandboxes under `<data dir>/sandboxes` with the limits and idle time of the settings,
    their agents built by the deployment (sharing its model, audit log and checkpointer)."""
    from bot.files.sandboxes import SandboxAgents, sandbox_limits
    from connectors.sandbox.sandboxes import Sandboxes

    settings = deployment.settings
    return SandboxAgents(
        Sandboxes(settings.data_dir / "sandboxes", sandbox_limits(settings)),
        lambda connector, name: deployment.agent_for(connector, name=name),
        idle_s=settings.file_idle_s,
        run_limits=settings.limits,
    )


@dataclass(frozen=True)
class Served:
    """What the Slack bot serves from: the Router (which Agent answers each thread), the store
    of proposals, and the sandbox agents of threads with files (the Router asks them first)."""

    router: Router
    store: Store
    sandboxes: SandboxAgents


@contextmanager
def serving(settings: Settings) -> Iterator[Served]:
    """The bot's Deployment with every configured warehouse open, its sandbox agents and store;
    on the way out the sandboxes, then the warehouses are closed (waiting for catalog refreshes).
    """
    from bot.routing import Router

    deployment = Deployment(settings)
    # files shared in a thread: that thread's own sandbox answers it (`SandboxAgents`)
    sandboxes = sandbox_agents(deployment)
    try:
        router = Router(deployment.open_warehouses(), deployment.config, override=sandboxes.lookup)
        yield Served(router, open_store(settings), sandboxes)
    finally:
        sandboxes.close()
        deployment.close()


def wire(
    settings: Settings,
    client: WebClient,
    router: Router,
    store: Store,
    *,
    sandboxes: SandboxAgents | None = None,
) -> Querybot:
    """What the Bolt app's listeners act through (`Querybot`), on `client`: the
    conversations (running work in a pool of `settings.workers`), approvers and answered channels
    as the settings say, the Home tab's tables, and with `sandboxes` the loader of shared files.
    Starts nothing: the app starts the sandbox sweep and the recovery watch."""
    from bot.access.approvals import Approvers
    from bot.conversations.work import Work
    from bot.files.slack_files import SlackFiles
    from bot.files.uploads import ThreadUploads
    from bot.listeners.querybot import Querybot
    from bot.routing import RoutedChannelRules
    from bot.schedules.service import build_schedules
    from bot.suggested_prompts import SuggestedPrompts, golden_sets

    work = Work(settings.workers)
    conversations = _conversations(client, router, store, work, settings)
    identities = conversations.identities
    approvers = Approvers(settings.approver_rule(), client)
    channels = RoutedChannelRules(client, router.config, settings.channels)
    uploads = None
    if sandboxes is not None:
        files = SlackFiles(client, max_bytes=settings.file_max_bytes)
        uploads = ThreadUploads(conversations, sandboxes, files)
    return Querybot(
        conversations=conversations,
        store=store,
        approvers=approvers,
        channels=channels,
        # the Home tab lists to each person the tables their own identity may read (run_as)
        warehouses=partial(router.warehouses, directory=identities),
        uploads=uploads,
        # a direct message suggests what its warehouse is known to answer
        prompts=SuggestedPrompts(router, golden_sets(settings.golden_dir), identities),
        schedules=build_schedules(settings, client, router, store, identities, approvers),
    )


def _conversations(
    client: WebClient, router: Router, store: Store, work: Work, settings: Settings
) -> Conversations:
    """`Conversations` with its collaborators, sharing its Slack client, Router and store."""
    from bot.access.clearance import Clearance
    from bot.access.identity import Directory
    from bot.conversations.cancels import Cancels
    from bot.conversations.conversations import Collaborators, Conversations
    from bot.conversations.outcomes import Outcomes
    from bot.conversations.recovery import Recovery
    from bot.conversations.status import Statuses
    from bot.conversations.stream import Streams

    private = router.config.answers_private
    outcomes = Outcomes(
        client,
        store,
        display_rows=settings.display_rows,
        private=private,
        feedback=settings.slack_feedback,
        schedule=settings.schedules,  # the "Schedule…" button, when `_schedules` makes them
    )
    identities = Directory(client)
    parts = Collaborators(
        outcomes=outcomes,
        cancels=Cancels(client, router),
        identities=identities,
        clearance=Clearance(router, identities),
        recovery=Recovery(client, router, store, work, outcomes),
        statuses=Statuses(client, enabled=settings.slack_status),
        streams=Streams(client, enabled=settings.slack_stream),
    )
    return Conversations(client, router, store, work, parts)

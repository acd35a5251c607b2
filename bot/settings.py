"""Settings from the environment (and `.env`), checked once at start with messages that name
each bad variable and say what to set.

pydantic-settings reads them (the base, `EnvSettings`, the message wording and the connectors' own
groups live with the connectors). Each group below is one concern; `Settings` combines them, so code
reads `settings.row_limit` whichever group defines it. A value shaped like a template's placeholder
(`xoxb-...`, left by `cp .env.example .env`) counts as unset.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from dotenv import load_dotenv
from pydantic import field_validator, model_validator
from pydantic_settings import NoDecode

from agent.context import Strategies
from agent.gate.casts import parse_allowed_types
from agent.gate.functions import parse_allowed
from agent.strategies.options import parse_strategies
from bot.access.approver_rule import ApproverRule
from bot.schedules.settings import ScheduleSettings
from connectors.settings import ConnectorSettings, EnvSettings, LimitSettings, variable
from connectors.settings import SettingsError as SettingsError

DEFAULT_MODEL = "google_genai:gemini-2.5-flash"
DEFAULT_WORKERS = 64

#: A Slack channel id (not its name): C… public, G… private, D… a direct message.
CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{2,}$")

#: Where each secret comes from, for the message shown when it is missing.
_WHERE = {
    "SLACK_BOT_TOKEN": "Slack app > OAuth & Permissions > Bot User OAuth Token (xoxb-...)",
    "SLACK_APP_TOKEN": (
        "Slack app > Basic Information > App-Level Tokens, scope connections:write (xapp-...)"
    ),
    "SLACK_SIGNING_SECRET": "Slack app > Basic Information > App Credentials > Signing Secret",
    "GOOGLE_API_KEY": "Google AI Studio > Get API key (or set QUERYBOT_MODEL to another provider)",
}

#: Where to go with no model key: said with every message about a missing one.
NO_KEY_ROUTES = (
    "No model key? `uv run querybot chat --demo` answers the demo warehouse's sample questions "
    "from recorded replies (no model is called); QUERYBOT_MODEL=openai:NAME with OPENAI_BASE_URL "
    "(and any OPENAI_API_KEY) uses a local OpenAI-compatible server such as llama.cpp's; "
    "docs/terminal.md has both."
)

#: What a template's "fill this in" looks like: `xoxb-...` and `xapp-...` (.env.example), `...` or
#: `…` anywhere, `<your token>`, `your-key-here`, `paste-it-here`, `changeme`, `TODO`, `xxxx`.
#: No real token, key, secret, URL or path looks like this.
_PLACEHOLDER = re.compile(
    r"\.\.\.|…|^<.*>$|(^|[-_ ])your([-_ ]|$)|[-_ ]here$"
    r"|^(change[-_ ]?me|fill[-_ ]?me[-_ ]?in|todo|tbd|placeholder|x{3,})$",
    re.IGNORECASE,
)

#: The variables querybot reads (the others are for the libraries it uses).
_OURS = ("SLACK_", "QUERYBOT_", "GOOGLE_API_KEY")


def is_placeholder(value: str) -> bool:
    """A value left as a template wrote it, which counts as unset."""
    return bool(_PLACEHOLDER.search(value.strip()))


class ModelSettings(EnvSettings):
    """The model that writes the SQL, and how hard it tries."""

    model: str = variable("QUERYBOT_MODEL", DEFAULT_MODEL)
    #: A cheaper model for the self-check strategy (default: the model).
    check_model: str | None = variable("QUERYBOT_CHECK_MODEL", None)
    google_api_key: str = variable("GOOGLE_API_KEY", "", repr=False)
    #: Seconds one model request may take before it is cut and tried again (the agent's retry:
    #: three attempts in all).
    model_timeout_s: float = variable("QUERYBOT_MODEL_TIMEOUT_S", 60.0, gt=0, le=3600)
    #: Seconds before the first retry of a model request that failed in a way worth retrying
    #: (rate limit, quota, server error, timeout); the next wait is twice as long, jittered.
    model_backoff_s: float = variable("QUERYBOT_MODEL_BACKOFF_S", 2.0, gt=0, le=60)
    max_repairs: int = variable("QUERYBOT_MAX_REPAIRS", 3, ge=1, le=10)
    #: As given; `parsed_strategies()` is what it names.
    strategies: str = variable("QUERYBOT_STRATEGIES", "")

    @field_validator("strategies")
    @classmethod
    def _strategies(cls, value: str) -> str:
        parse_strategies(value)  # StrategiesError is a ValueError saying what is accepted
        return value


class QuerySettings(LimitSettings):
    """Which warehouse is asked, and what one question's query may be and cost."""

    warehouse: str = variable("QUERYBOT_WAREHOUSE", "demo")
    #: The day questions are asked on (YYYY-MM-DD), pinned for tests and repeatable runs: the
    #: model is told it, SQL reading the clock reads it, and the demo's history ends the day
    #: before. None: the real date.
    today: dt.date | None = variable("QUERYBOT_TODAY", None)
    #: A TOML file naming several warehouses and the channel mapping (`DeploymentConfig`); None: one
    #: warehouse, `warehouse`.
    config_file: Path | None = variable("QUERYBOT_CONFIG", None)
    row_limit: int = variable("QUERYBOT_ROW_LIMIT", 1000, ge=1, le=100_000)
    query_timeout_s: float = variable("QUERYBOT_QUERY_TIMEOUT_S", 60.0, gt=0, le=86_400)
    display_rows: int = variable("QUERYBOT_DISPLAY_ROWS", 20, ge=1, le=1000)
    #: Profile column values for the prompt and check literal filters against real data: "auto"
    #: (on, except where wiring.NOT_PROFILED says why not), "on" or "off".
    profile_values: Literal["auto", "on", "off"] = variable("QUERYBOT_PROFILE_VALUES", "auto")
    #: A YAML business glossary (terms, definitions, preferred expressions), or None.
    glossary: Path | None = variable("QUERYBOT_GLOSSARY", None)
    #: The warehouse's dbt project: its directory, its target/ or its manifest.json (descriptions,
    #: value lists, join keys and metrics). A config file sets it per warehouse.
    dbt_project: Path | None = variable("QUERYBOT_DBT_PROJECT", None)
    #: The team's own pure functions the gate accepts besides the engine's known pure ones
    #: (comma-separated `name` or `schema.name`, lower-cased).
    allowed_functions: Annotated[tuple[str, ...], NoDecode] = variable(
        "QUERYBOT_ALLOWED_FUNCTIONS", ()
    )
    #: The team's own types the gate accepts in casts besides the engine's built-in ones
    #: (comma-separated `name` or `schema.name`, lower-cased): enums, domains, `geography`.
    allowed_types: Annotated[tuple[str, ...], NoDecode] = variable("QUERYBOT_ALLOWED_TYPES", ())

    @field_validator("today", mode="before")
    @classmethod
    def _day(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(
                f"QUERYBOT_TODAY must be a date written YYYY-MM-DD (such as 2026-11-01), got "
                f"{value!r}; leave it unset to use the real date."
            ) from None

    @field_validator("profile_values", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @field_validator("allowed_functions", mode="before")
    @classmethod
    def _functions(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return tuple(sorted(parse_allowed(value)))
        except ValueError as exc:
            raise ValueError(f"{exc}; list names separated by commas, e.g. fiscal_week") from None

    @field_validator("allowed_types", mode="before")
    @classmethod
    def _types(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return tuple(sorted(parse_allowed_types(value)))
        except ValueError as exc:
            example = "e.g. mood,geography"
            raise ValueError(f"{exc}; list names separated by commas, {example}") from None


class SlackSettings(EnvSettings):
    """The Slack app, who may approve, where the bot answers, and how much it serves at once."""

    slack_bot_token: str = variable("SLACK_BOT_TOKEN", "", repr=False)
    slack_app_token: str = variable("SLACK_APP_TOKEN", "", repr=False)
    slack_signing_secret: str = variable("SLACK_SIGNING_SECRET", "", repr=False)
    #: Another Slack Web API base URL (the tests' stand-in).
    slack_api_url: str | None = variable("SLACK_API_URL", None)
    #: As given; `approver_rule()` is what it says.
    approvers: str = variable("QUERYBOT_APPROVERS", "anyone")
    no_self_approval: bool = variable("QUERYBOT_NO_SELF_APPROVAL", False)
    #: Channel ids the bot answers in (empty: every channel it is in).
    channels: Annotated[frozenset[str], NoDecode] = variable("QUERYBOT_CHANNELS", frozenset())
    #: Questions and approvals worked on at once. A question holds its worker while the model
    #: answers (seconds of waiting, little CPU), so this is the number of people served at once.
    #: It bounds nothing else: a SQL database's connector runs at most 4 statements at once and
    #: queues the rest (`SqlConnector`), and the PostgreSQL state pools have fixed sizes
    #: (`POOL_SIZE`).
    workers: int = variable("QUERYBOT_WORKERS", DEFAULT_WORKERS, ge=1, le=1024)
    #: HTTP mode: the largest request body taken, in KiB, and the connections served at once; both
    #: checked before a body is read. A click on a message at Slack's limits (50 blocks of 3,000
    #: characters, a 40,000-character text) form-encodes to 360-590 KiB; the bot's own messages and
    #: its one-input modal are far smaller.
    http_max_body_kb: int = variable("QUERYBOT_HTTP_MAX_BODY_KB", 1024, ge=1, le=102_400)
    http_max_connections: int = variable("QUERYBOT_HTTP_MAX_CONNECTIONS", 64, ge=1, le=10_000)
    #: Slack's status under a thread while its question or approved query is worked on
    #: ("querybot is drafting SQL…"); off, a question shows its progress in its message only.
    slack_status: bool = variable("QUERYBOT_SLACK_STATUS", True)
    #: The graph's steps streamed into the thread as a plan that updates as it moves, with the
    #: SQL it drafted; off, a thread shows the cards only.
    slack_stream: bool = variable("QUERYBOT_SLACK_STREAM", True)
    #: Socket Mode: seconds between pings of the connection and checks that it is still open; a
    #: dropped one is reopened at the next check, and one unanswered for four pings is replaced.
    socket_ping_s: float = variable("QUERYBOT_SOCKET_PING_S", 10.0, ge=1, le=300)
    #: The golden sets (*.yaml) whose questions a direct message suggests, each to the warehouse
    #: its `warehouse:` names (by name or QUERYBOT_WAREHOUSE form); a missing folder: none.
    golden_dir: Path = variable("QUERYBOT_GOLDEN_DIR", Path("evals"))
    #: Slack's thumbs up/down under every answer (a liked one may become a verified example,
    #: a disliked one is noted for review); off, answers carry no feedback buttons.
    slack_feedback: bool = variable("QUERYBOT_SLACK_FEEDBACK", True)

    @field_validator("approvers")
    @classmethod
    def _approvers(cls, value: str) -> str:
        ApproverRule.parse(value)  # a ValueError naming the entries it cannot read
        return value

    @field_validator("channels", mode="before")
    @classmethod
    def _channels(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        channels = frozenset(c.strip() for c in value.split(",") if c.strip())
        names = sorted(c for c in channels if not CHANNEL_ID.match(c))
        if names:
            raise ValueError(
                f"{', '.join(names)} is not a channel id; list ids (like C0123456789, from the "
                "channel's details in Slack) separated by commas, not names."
            )
        return channels


class StateSettings(EnvSettings):
    """Where the bot keeps its state: conversation checkpoints, its store, the audit log."""

    data_dir: Path = variable("QUERYBOT_DATA_DIR", Path("data"))
    #: A postgresql:// URL for the state replicas share; None keeps it in SQLite files in
    #: `data_dir`.
    state_url: str | None = variable("QUERYBOT_STATE_URL", None, repr=False)
    #: Seconds between looks for work a process that died (this one before a restart, another
    #: replica) left unfinished; this process's liveness lock is renewed four times as often. On
    #: PostgreSQL a process is taken for dead after two looks in a row, so its threads are told
    #: one to two intervals after it died: every replica must use the same value.
    recover_every_s: float = variable("QUERYBOT_RECOVER_EVERY_S", 60.0, ge=1, le=3600)

    @field_validator("state_url")
    @classmethod
    def _postgres(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError(
                "should be a postgresql://user@host:port/database URL (leave it unset to keep "
                "state in SQLite files in QUERYBOT_DATA_DIR)."
            )
        return value

    @property
    def state_db(self) -> Path:
        """The SQLite file holding LangGraph checkpoints and the bot's own store."""
        return self.data_dir / "state.sqlite"

    @property
    def audit_db(self) -> Path:
        """The append-only audit log (`AuditLog` has its table)."""
        return self.data_dir / "audit.sqlite"


class FileSettings(EnvSettings):
    """Files shared in a thread (`Sandboxes`): the largest file taken, the rows and tables a
    thread's sandbox may hold, how long an unused one is kept; and what loading one file may cost
    (`SandboxLimits`): columns of a table, values (rows times columns) of a file, bytes its values
    expand to once read, and the loader process's memory, wall-clock time and disk."""

    file_max_mb: float = variable("QUERYBOT_FILE_MAX_MB", 50.0, gt=0, le=1024)
    file_max_rows: int = variable("QUERYBOT_FILE_MAX_ROWS", 5_000_000, ge=1, le=10**9)
    file_max_tables: int = variable("QUERYBOT_FILE_MAX_TABLES", 20, ge=1, le=1000)
    file_idle_s: float = variable("QUERYBOT_FILE_IDLE_S", 86400.0, gt=0, le=30 * 86400)
    file_max_columns: int = variable("QUERYBOT_FILE_MAX_COLUMNS", 500, ge=1, le=10_000)
    file_max_cells: int = variable("QUERYBOT_FILE_MAX_CELLS", 50_000_000, ge=1, le=10**10)
    file_max_expanded_mb: float = variable(
        "QUERYBOT_FILE_MAX_EXPANDED_MB", 1024.0, gt=0, le=1_048_576
    )
    file_memory_mb: float = variable("QUERYBOT_FILE_MEMORY_MB", 1024.0, gt=0, le=1_048_576)
    file_timeout_s: float = variable("QUERYBOT_FILE_TIMEOUT_S", 120.0, gt=0, le=86_400)
    file_disk_mb: float = variable("QUERYBOT_FILE_DISK_MB", 1024.0, gt=0, le=1_048_576)

    @property
    def file_max_bytes(self) -> int:
        return int(self.file_max_mb * 1024 * 1024)


class Settings(
    ModelSettings,
    QuerySettings,
    SlackSettings,
    StateSettings,
    FileSettings,
    ScheduleSettings,
    ConnectorSettings,
):
    """Everything the bot and the CLI read from the environment."""

    #: Variables whose value was a template's placeholder (`xoxb-...`), so taken as unset.
    placeholders: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, dotenv: bool = True) -> Settings:
        """The settings of `env`, or of the process environment when None (with the `.env` of
        the directory querybot runs in, when `dotenv`). Raises SettingsError naming every bad
        variable."""
        if env is None and dotenv:
            # Into the environment, which wins over it: the libraries querybot uses read their
            # own variables there (the model clients' GOOGLE_API_KEY and OPENAI_*, LangSmith),
            # as does `${NAME}` in a QUERYBOT_CONFIG file.
            load_dotenv(Path.cwd() / ".env", override=False)
        return super().from_env(env)

    @model_validator(mode="before")
    @classmethod
    def _placeholders_are_unset(cls, data: Any) -> Any:
        """`cp .env.example .env` leaves `xoxb-...` in place: a placeholder counts as unset (and
        the message about it says it is a placeholder)."""
        if not isinstance(data, dict):
            return data
        found = frozenset(
            k
            for k, v in data.items()
            if isinstance(k, str) and k.startswith(_OURS) and isinstance(v, str)
            if is_placeholder(v)
        )
        kept = {k: v for k, v in data.items() if k not in found}
        return {**kept, "placeholders": found} if found else kept

    def approver_rule(self) -> ApproverRule:
        return ApproverRule.parse(self.approvers, no_self_approval=self.no_self_approval)

    def parsed_strategies(self) -> Strategies:
        return parse_strategies(self.strategies)

    def model_secrets(self) -> list[str]:
        """The secrets the configured model provider needs."""
        models = [self.model, self.check_model or ""]
        return ["GOOGLE_API_KEY"] if any(m.startswith("google_genai:") for m in models) else []

    def missing_model_secrets(self) -> list[str]:
        """The model's secrets that are not set."""
        return [n for n in self.model_secrets() if not self.secret(n)]

    def no_model_key(self) -> str:
        """Why a question in words cannot be asked in the terminal, and where to go instead."""
        missing = self.missing_model_secrets()
        unset = " and ".join(self.unset(n) for n in missing)
        where = "; ".join(_WHERE[n] for n in missing)
        return (
            f"A question in words needs the model, and {unset} (from {where}), so nothing was "
            f"asked; pasted SQL runs without it. {NO_KEY_ROUTES}"
        )

    def secret(self, name: str) -> str:
        """The value of the secret variable `name` (one of `_WHERE`), "" when unset."""
        return {
            "SLACK_BOT_TOKEN": self.slack_bot_token,
            "SLACK_APP_TOKEN": self.slack_app_token,
            "SLACK_SIGNING_SECRET": self.slack_signing_secret,
            "GOOGLE_API_KEY": self.google_api_key,
        }[name]

    def require(self, *names: str) -> None:
        """Raise SettingsError naming every missing secret and where to find it."""
        missing = [n for n in names if not self.secret(n)]
        routes = any(n in self.model_secrets() for n in missing)
        if len(missing) == 1:
            raise SettingsError(
                f"querybot cannot start: {self.unset(missing[0])}; set it in .env or the "
                f"environment, from {_WHERE[missing[0]]}." + f" {NO_KEY_ROUTES}" * routes
            )
        if missing:
            lines = [
                f"  {n}{' (still a placeholder)' * (n in self.placeholders)}: {_WHERE[n]}"
                for n in missing
            ]
            raise SettingsError(
                "querybot cannot start; set these in .env or the environment "
                "(see .env.example):\n" + "\n".join(lines) + f"\n{NO_KEY_ROUTES}" * routes
            )

    def unset(self, name: str) -> str:
        """`name is not set`, saying so when it holds a placeholder (`xoxb-...`)."""
        if name in self.placeholders:
            return f"{name} still holds a placeholder, not a value"
        return f"{name} is not set"

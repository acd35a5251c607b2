"""Settings from the environment (and `.env`), checked once with messages that say what to set."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dotenv import load_dotenv

from agent.context import Strategies
from agent.gate.functions import parse_allowed
from agent.strategies import StrategiesError, parse_strategies
from bot.approvals import ApproverRule
from connectors.limits import Limits

DEFAULT_MODEL = "google_genai:gemini-2.5-flash"
DEFAULT_WORKERS = 64

#: Where each secret comes from, for the message shown when it is missing.
_WHERE = {
    "SLACK_BOT_TOKEN": "Slack app > OAuth & Permissions > Bot User OAuth Token (xoxb-...)",
    "SLACK_APP_TOKEN": (
        "Slack app > Basic Information > App-Level Tokens, scope connections:write (xapp-...)"
    ),
    "SLACK_SIGNING_SECRET": "Slack app > Basic Information > App Credentials > Signing Secret",
    "GOOGLE_API_KEY": "Google AI Studio > Get API key (or set QUERYBOT_MODEL to another provider)",
}

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


def _flag(env: dict[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value in {"", "0", "false", "no", "off"}:
        return False
    if value in {"1", "true", "yes", "on"}:
        return True
    raise SettingsError(f"{name} should be true or false, not {value!r}")


def _state_url(value: str) -> str | None:
    if not value:
        return None
    if not value.startswith(("postgresql://", "postgres://")):
        raise SettingsError(
            "QUERYBOT_STATE_URL should be a postgresql://user@host:port/database URL "
            "(leave it unset to keep state in SQLite files in QUERYBOT_DATA_DIR)."
        )
    return value


def _functions(value: str) -> tuple[str, ...]:
    try:
        return tuple(sorted(parse_allowed(value)))
    except ValueError as exc:
        example = "e.g. fiscal_week,ops.margin"
        raise SettingsError(f"{exc}; list names separated by commas, {example}") from None


def _workers(value: str) -> int:
    if not value:
        return DEFAULT_WORKERS
    workers = int(value)
    if workers < 1:
        raise SettingsError(
            f"QUERYBOT_WORKERS={workers}: it is how many questions are worked on at once, so at "
            f"least 1 (default {DEFAULT_WORKERS})."
        )
    return workers


def _seconds(env: dict[str, str], name: str, default: float) -> float:
    """A time limit in seconds: a positive number, `default` when unset."""
    value = env.get(name, "").strip()
    seconds = float(value) if value else default
    if not seconds > 0:
        raise SettingsError(
            f"{name}={value}: a time limit in seconds, above 0 (default {default:g})."
        )
    return seconds


def _count(env: dict[str, str], name: str, default: int) -> int:
    """A bound counted in units (KiB, connections): a whole number of at least 1."""
    value = env.get(name, "").strip()
    count = int(value) if value else default
    if count < 1:
        raise SettingsError(f"{name}={value}: a bound, at least 1 (default {default}).")
    return count


def _positive(env: dict[str, str], name: str, default: float, unit: str) -> float:
    """A bound: a number above 0, `default` when unset."""
    value = env.get(name, "").strip()
    number = float(value) if value else default
    if not number > 0:
        raise SettingsError(f"{name}={value}: a limit in {unit}, above 0 (default {default:g}).")
    return number


class SettingsError(Exception):
    """Settings are missing or wrong; the message names each one and where to get it."""


@dataclass(frozen=True)
class Settings:
    """Everything the bot and the CLI read from the environment."""

    model: str = DEFAULT_MODEL
    warehouse: str = "demo"
    data_dir: Path = Path("data")
    row_limit: int = 1000
    query_timeout_s: float = 60.0
    #: `QUERYBOT_MODEL_TIMEOUT_S`: seconds one model request may take (Gemini) before it is cut
    #: and tried again (the agent's retry: three attempts in all).
    model_timeout_s: float = 60.0
    max_repairs: int = 3
    display_rows: int = 20
    #: `QUERYBOT_WORKERS`: questions and approvals worked on at once. A question holds its worker
    #: while the model answers (seconds of waiting, little CPU), so this is the number of people
    #: served at once. It bounds nothing else: a SQL database's connector runs at most 4
    #: statements at once and queues the rest (connectors/sql.py), and the PostgreSQL state
    #: pools have fixed sizes (agent/postgres.py).
    workers: int = DEFAULT_WORKERS
    slack_bot_token: str = ""
    slack_app_token: str = ""
    slack_signing_secret: str = ""
    slack_api_url: str | None = None
    #: A YAML business glossary (terms, definitions, preferred expressions), or None.
    glossary: Path | None = None
    #: Profile column values for the prompt and check literal filters against real data:
    #: "auto" (on, except for BigQuery where profiling scans cost money), "on" or "off".
    profile_values: str = "auto"
    #: `QUERYBOT_APPROVERS` as given (parsed by bot.approvals.ApproverRule).
    approvers: str = "anyone"
    no_self_approval: bool = False
    #: Channel ids the bot answers in (empty: every channel it is in).
    channels: frozenset[str] = frozenset()
    #: `QUERYBOT_STATE_URL`: a postgresql:// URL for the state replicas share (checkpoints, the
    #: bot's store, the audit log); None keeps them in SQLite files in `data_dir`.
    state_url: str | None = None
    #: `QUERYBOT_CONFIG`: a TOML file naming several warehouses and the channel mapping
    #: (bot/config.py); None: one warehouse, `warehouse`.
    config_file: Path | None = None
    #: `QUERYBOT_STRATEGIES` as given (parsed by agent.strategies.parse_strategies).
    strategies: str = ""
    #: `QUERYBOT_CHECK_MODEL`: a cheaper model for the self-check strategy (default: the model).
    check_model: str | None = None
    #: `QUERYBOT_ALLOWED_FUNCTIONS`: the team's own pure functions the gate accepts besides the
    #: engine's known pure ones (comma-separated `name` or `schema.name`, lower-cased).
    allowed_functions: tuple[str, ...] = ()
    #: Files shared in a thread (connectors/sandbox.py): the largest file taken, rows and tables
    #: a thread's sandbox may hold, and how long an unused sandbox is kept.
    file_max_mb: float = 50.0
    file_max_rows: int = 5_000_000
    file_max_tables: int = 20
    file_idle_s: float = 86400.0
    #: What loading one file may cost (connectors/sandbox_bounds.py): columns of a table,
    #: values (rows times columns) of a file, bytes its values expand to once read, and the
    #: loader process's memory, wall-clock time and disk (the sandbox database and temp files).
    file_max_columns: int = 500
    file_max_cells: int = 50_000_000
    file_max_expanded_mb: float = 1024.0
    file_memory_mb: float = 1024.0
    file_timeout_s: float = 120.0
    file_disk_mb: float = 1024.0
    #: What one query may cost (connectors/limits.py): QUERYBOT_MAX_CELL_BYTES,
    #: QUERYBOT_MAX_RESULT_MB, QUERYBOT_ENGINE_MEMORY_MB, QUERYBOT_ENGINE_TEMP_MB.
    limits: Limits = field(default_factory=Limits)
    #: HTTP mode (bot/http_server.py): the largest request body taken, in KiB, and the
    #: connections served at once; both checked before a body is read. A click on a message at
    #: Slack's limits (50 blocks of 3,000 characters, a 40,000-character text) form-encodes to
    #: 360-590 KiB; the bot's own messages and its one-input modal are far smaller.
    http_max_body_kb: int = 1024
    http_max_connections: int = 64
    extra: dict[str, str] = field(default_factory=dict)
    #: Variables whose value was a template's placeholder (`xoxb-...`), so taken as unset.
    placeholders: frozenset[str] = frozenset()

    @property
    def state_db(self) -> Path:
        """The SQLite file holding LangGraph checkpoints and the bot's own store."""
        return self.data_dir / "state.sqlite"

    @property
    def file_max_bytes(self) -> int:
        return int(self.file_max_mb * 1024 * 1024)

    @property
    def audit_db(self) -> Path:
        """The append-only audit log (see agent/audit.py for its table)."""
        return self.data_dir / "audit.sqlite"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, *, dotenv: bool = True) -> Settings:
        if env is None:
            if dotenv:
                # The .env of the directory querybot runs in; the environment wins over it.
                load_dotenv(Path.cwd() / ".env", override=False)
            env = dict(os.environ)
        # `cp .env.example .env` leaves `xoxb-...` in place: a placeholder counts as unset (and
        # the message about it says it is a placeholder)
        placeholders = frozenset(
            k for k, v in env.items() if k.startswith(_OURS) and is_placeholder(v)
        )
        env = {k: v for k, v in env.items() if k not in placeholders}
        try:
            return cls(
                model=env.get("QUERYBOT_MODEL") or DEFAULT_MODEL,
                warehouse=env.get("QUERYBOT_WAREHOUSE") or "demo",
                data_dir=Path(env.get("QUERYBOT_DATA_DIR") or "data"),
                row_limit=int(env.get("QUERYBOT_ROW_LIMIT") or 1000),
                query_timeout_s=_seconds(env, "QUERYBOT_QUERY_TIMEOUT_S", 60),
                model_timeout_s=_seconds(env, "QUERYBOT_MODEL_TIMEOUT_S", 60),
                max_repairs=int(env.get("QUERYBOT_MAX_REPAIRS") or 3),
                workers=_workers(env.get("QUERYBOT_WORKERS", "").strip()),
                display_rows=int(env.get("QUERYBOT_DISPLAY_ROWS") or 20),
                slack_bot_token=env.get("SLACK_BOT_TOKEN", "").strip(),
                slack_app_token=env.get("SLACK_APP_TOKEN", "").strip(),
                slack_signing_secret=env.get("SLACK_SIGNING_SECRET", "").strip(),
                slack_api_url=env.get("SLACK_API_URL") or None,
                glossary=Path(env["QUERYBOT_GLOSSARY"]) if env.get("QUERYBOT_GLOSSARY") else None,
                profile_values=(env.get("QUERYBOT_PROFILE_VALUES") or "auto").lower(),
                approvers=env.get("QUERYBOT_APPROVERS") or "anyone",
                no_self_approval=_flag(env, "QUERYBOT_NO_SELF_APPROVAL"),
                channels=frozenset(
                    c.strip() for c in env.get("QUERYBOT_CHANNELS", "").split(",") if c.strip()
                ),
                state_url=_state_url(env.get("QUERYBOT_STATE_URL", "").strip()),
                strategies=env.get("QUERYBOT_STRATEGIES", "").strip(),
                check_model=env.get("QUERYBOT_CHECK_MODEL", "").strip() or None,
                allowed_functions=_functions(env.get("QUERYBOT_ALLOWED_FUNCTIONS", "")),
                config_file=Path(env["QUERYBOT_CONFIG"]) if env.get("QUERYBOT_CONFIG") else None,
                file_max_mb=float(env.get("QUERYBOT_FILE_MAX_MB") or 50),
                file_max_rows=int(env.get("QUERYBOT_FILE_MAX_ROWS") or 5_000_000),
                file_max_tables=int(env.get("QUERYBOT_FILE_MAX_TABLES") or 20),
                file_idle_s=float(env.get("QUERYBOT_FILE_IDLE_S") or 86400),
                file_max_columns=int(_positive(env, "QUERYBOT_FILE_MAX_COLUMNS", 500, "columns")),
                file_max_cells=int(_positive(env, "QUERYBOT_FILE_MAX_CELLS", 50_000_000, "values")),
                file_max_expanded_mb=_positive(env, "QUERYBOT_FILE_MAX_EXPANDED_MB", 1024, "MB"),
                file_memory_mb=_positive(env, "QUERYBOT_FILE_MEMORY_MB", 1024, "MB"),
                file_timeout_s=_seconds(env, "QUERYBOT_FILE_TIMEOUT_S", 120),
                file_disk_mb=_positive(env, "QUERYBOT_FILE_DISK_MB", 1024, "MB"),
                limits=Limits.from_env(env),
                http_max_body_kb=_count(env, "QUERYBOT_HTTP_MAX_BODY_KB", 1024),
                http_max_connections=_count(env, "QUERYBOT_HTTP_MAX_CONNECTIONS", 64),
                extra={k: v.strip() for k, v in env.items() if k == "GOOGLE_API_KEY"},
                placeholders=placeholders,
            )
        except ValueError as exc:
            raise SettingsError(f"A QUERYBOT_* number setting is not a number: {exc}") from exc

    def approver_rule(self) -> ApproverRule:
        try:
            return ApproverRule.parse(self.approvers, no_self_approval=self.no_self_approval)
        except ValueError as exc:
            raise SettingsError(str(exc)) from exc

    def parsed_strategies(self) -> Strategies:
        try:
            return parse_strategies(self.strategies)
        except StrategiesError as exc:
            raise SettingsError(f"QUERYBOT_STRATEGIES: {exc}") from exc

    def model_secrets(self) -> list[str]:
        """The secrets the configured model provider needs."""
        models = [self.model, self.check_model or ""]
        return ["GOOGLE_API_KEY"] if any(m.startswith("google_genai:") for m in models) else []

    def require(self, *names: str) -> None:
        """Raise SettingsError naming every missing secret and where to find it."""
        values = {
            "SLACK_BOT_TOKEN": self.slack_bot_token,
            "SLACK_APP_TOKEN": self.slack_app_token,
            "SLACK_SIGNING_SECRET": self.slack_signing_secret,
            "GOOGLE_API_KEY": self.extra.get("GOOGLE_API_KEY", ""),
        }
        missing = [n for n in names if not values.get(n)]
        if len(missing) == 1:
            raise SettingsError(
                f"querybot cannot start: {self.unset(missing[0])}; set it in .env or the "
                f"environment, from {_WHERE[missing[0]]}."
            )
        if missing:
            lines = [
                f"  {n}{' (still a placeholder)' * (n in self.placeholders)}: {_WHERE[n]}"
                for n in missing
            ]
            raise SettingsError(
                "querybot cannot start; set these in .env or the environment "
                "(see .env.example):\n" + "\n".join(lines)
            )

    def unset(self, name: str) -> str:
        """`name is not set`, saying so when it holds a placeholder (`xoxb-...`)."""
        if name in self.placeholders:
            return f"{name} still holds a placeholder, not a value"
        return f"{name} is not set"

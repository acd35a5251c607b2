"""The deployment's config file (`QUERYBOT_CONFIG`): several named warehouses and which Slack
channel asks which one.

    default = "shop"                      # unmapped channels and direct messages (optional)

    [warehouses.shop]
    spec = "demo"                         # any QUERYBOT_WAREHOUSE form
    description = "Orders, customers and products of the demo shop"

    [warehouses.finance]
    spec = "postgresql://querybot:${FINANCE_DB_PASSWORD}@db.internal/finance"
    row_limit = 500
    query_timeout_s = 30
    dbt_project = "../analytics"          # its dbt project (relative to this file): optional

    [warehouses.finance.run_as]           # whose access each question runs with: optional
    groups = { S0123456789 = "finance_analyst" }
    unmapped = "refuse"                   # or a role everyone else runs as

    [channels]
    C0123456789 = "finance"               # Slack channel id = warehouse name
    C0987654321 = { warehouse = "finance", answers = "private" }

A channel's `answers` say where the results of its questions go: "thread" (the default: in
the thread, for everyone in the channel) or "private" (only to the person who asked and the
person who approved, as messages only they see).

Secrets stay out of the file: `${NAME}` in a spec is replaced by the environment variable NAME.
Without a config file the deployment is one warehouse named "main", from `QUERYBOT_WAREHOUSE`.
Parsing is pure (no connection is opened); every mistake is a SettingsError naming the file,
the key and what to change.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.access.identity import RunAsRules, parse_run_as
from bot.settings import CHANNEL_ID, Settings, SettingsError
from connectors.base import ConnectorError

#: The warehouse's name when there is no config file (one warehouse, from QUERYBOT_WAREHOUSE).
SINGLE = "main"

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TOP_KEYS = {"default", "warehouses", "channels"}
_CHANNEL_KEYS = {"warehouse", "answers"}
#: Where a channel's answers go: in the thread (the default), or only to asker and approver.
THREAD, PRIVATE = "thread", "private"
_WAREHOUSE_KEYS = {
    "spec",
    "description",
    "row_limit",
    "query_timeout_s",
    "dbt_project",
    "run_as",
}


class WarehouseError(ConnectorError):
    """A configured warehouse cannot be opened; the message names it (and its config file)."""


@dataclass(frozen=True)
class Warehouse:
    """One named warehouse. `spec` has its `${VARIABLES}` expanded (it may hold a secret: never
    log or show it; `shown_spec` is the form written in the file)."""

    name: str
    spec: str
    shown_spec: str
    description: str = ""
    #: Overrides of QUERYBOT_ROW_LIMIT and QUERYBOT_QUERY_TIMEOUT_S for this warehouse.
    row_limit: int | None = None
    query_timeout_s: float | None = None
    #: The warehouse's dbt project (a project directory, its `target/` or `manifest.json`), or None.
    dbt_project: Path | None = None
    #: Which identity each person's questions run as; None: the bot's login.
    run_as: RunAsRules | None = None


@dataclass(frozen=True)
class DeploymentConfig:
    """Every warehouse of the deployment, the default one and the channel mapping."""

    warehouses: dict[str, Warehouse]
    #: The warehouse of channels not in `channels` (and of direct messages); None: those get a
    #: polite note naming the channels that are mapped.
    default: str | None = None
    #: Slack channel id -> warehouse name.
    channels: dict[str, str] = field(default_factory=dict)
    #: The file it came from; None when built from QUERYBOT_WAREHOUSE.
    path: Path | None = None
    #: Channels whose answers go only to the asker and the approver (`answers = "private"`).
    private: frozenset[str] = frozenset()

    def answers_private(self, channel: str) -> bool:
        """Whether the results of questions in `channel` go only to asker and approver."""
        return channel in self.private

    def warehouse_for(self, channel: str) -> str | None:
        """The name of the warehouse `channel` asks, or None when there is none."""
        return self.channels.get(channel, self.default)

    def pick(self, name: str | None) -> Warehouse:
        """The warehouse `name`, or the one to use when none is named (the default, or the
        only one). Raises SettingsError listing the names when that is ambiguous or unknown."""
        names = ", ".join(self.warehouses)
        if name is None:
            chosen = self.default or (
                next(iter(self.warehouses)) if len(self.warehouses) == 1 else None
            )
            if chosen is None:
                raise SettingsError(
                    f"{self.path} names several warehouses and no default: choose one with "
                    f"--warehouse NAME ({names})."
                )
            return self.warehouses[chosen]
        if name not in self.warehouses:
            where = f"in {self.path}" if self.path else "(no QUERYBOT_CONFIG file is set)"
            raise SettingsError(
                f"There is no warehouse named {name!r} {where}; use one of: {names}."
            )
        return self.warehouses[name]


def single(settings: Settings) -> DeploymentConfig:
    """The deployment without a config file: QUERYBOT_WAREHOUSE, answered in every channel."""
    spec = settings.warehouse
    warehouse = Warehouse(SINGLE, spec, spec, dbt_project=settings.dbt_project)
    return DeploymentConfig({SINGLE: warehouse}, default=SINGLE)


def deployment_config(settings: Settings, env: Mapping[str, str]) -> DeploymentConfig:
    """The config file `settings.config_file` when set, else the single warehouse."""
    if settings.config_file is None:
        return single(settings)
    return load_config(settings.config_file, env)


def load_config(path: Path, env: Mapping[str, str]) -> DeploymentConfig:
    """Read and check a config file; raises SettingsError saying what to fix."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(
            f"QUERYBOT_CONFIG={path}: there is no such file. Create it (see "
            "querybot.example.toml) or unset QUERYBOT_CONFIG to use QUERYBOT_WAREHOUSE."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"QUERYBOT_CONFIG={path} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML: {exc}. Fix the file.") from None
    return parse_config(raw, env, path=path)


def parse_config(raw: dict[str, Any], env: Mapping[str, str], *, path: Path) -> DeploymentConfig:
    """Check the parsed TOML `raw` of `path` (see the module docstring for the format)."""

    def fail(key: str, problem: str) -> SettingsError:
        return SettingsError(f"{path}: {key}: {problem}")

    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise fail(
            ", ".join(sorted(unknown)),
            f"unknown key; the file holds only {', '.join(sorted(_TOP_KEYS))} "
            "(per-warehouse settings go under [warehouses.NAME]).",
        )
    tables = raw.get("warehouses")
    if not isinstance(tables, dict) or not tables:
        raise fail(
            "warehouses",
            'no warehouse is defined; add at least one [warehouses.NAME] table with spec = "...".',
        )
    warehouses = {
        name: _warehouse(name, value, env, fail, path.parent) for name, value in tables.items()
    }
    names = ", ".join(warehouses)

    default = raw.get("default")
    if default is not None and (not isinstance(default, str) or default not in warehouses):
        raise fail("default", f"{default!r} is not a warehouse of this file; use one of: {names}.")

    channels_raw = raw.get("channels", {})
    if not isinstance(channels_raw, dict):
        raise fail("channels", 'write it as a table: [channels] then C0123456789 = "NAME" lines.')
    channels: dict[str, str] = {}
    private: set[str] = set()
    for channel, value in channels_raw.items():
        key = f"channels.{channel}"
        if not CHANNEL_ID.match(channel):
            raise fail(
                key,
                "not a Slack channel id; use the id (like C0123456789, from the channel's "
                "details in Slack), not its name.",
            )
        name, answers = _channel(value, key, fail)
        if not isinstance(name, str) or name not in warehouses:
            raise fail(key, f"{name!r} is not a warehouse of this file; use one of: {names}.")
        channels[channel] = name
        if answers == PRIVATE:
            private.add(channel)
    return DeploymentConfig(
        warehouses, default=default, channels=channels, path=path, private=frozenset(private)
    )


def _channel(value: Any, key: str, fail: Any) -> tuple[Any, str]:
    """(warehouse name, answers) of one `[channels]` entry: "NAME", or a table with
    `warehouse` and `answers`."""
    if not isinstance(value, dict):
        return value, THREAD
    unknown = set(value) - _CHANNEL_KEYS
    if unknown:
        raise fail(
            f"{key}.{sorted(unknown)[0]}",
            'unknown setting; a channel takes warehouse = "NAME" and answers = "thread" or '
            '"private".',
        )
    answers = value.get("answers", THREAD)
    if answers not in (THREAD, PRIVATE):
        raise fail(
            f"{key}.answers",
            f'should be "thread" (in the thread, for the channel) or "private" (only to who '
            f"asked and who approved), not {answers!r}.",
        )
    return value.get("warehouse"), answers


def _warehouse(name: str, value: Any, env: Mapping[str, str], fail: Any, folder: Path) -> Warehouse:
    key = f"warehouses.{name}"
    if not _NAME.match(name):
        raise fail(key, "a warehouse name is 1-40 letters, digits, '-' or '_'.")
    if not isinstance(value, dict):
        raise fail(key, f'write it as a table: [{key}] then spec = "...".')
    unknown = set(value) - _WAREHOUSE_KEYS
    if unknown:
        raise fail(
            f"{key}.{sorted(unknown)[0]}",
            f"unknown setting; a warehouse takes {', '.join(sorted(_WAREHOUSE_KEYS))}.",
        )
    spec = value.get("spec")
    if not isinstance(spec, str) or not spec.strip():
        raise fail(
            f"{key}.spec",
            'missing; set it to a warehouse as QUERYBOT_WAREHOUSE takes it (e.g. "demo", '
            '"sqlite:///path/file.db", "postgresql://user:${PASSWORD}@host/db").',
        )
    description = value.get("description", "")
    if not isinstance(description, str):
        raise fail(f"{key}.description", "should be text in quotes.")
    # the bounds of QUERYBOT_ROW_LIMIT and QUERYBOT_QUERY_TIMEOUT_S, which these override
    for setting in ("row_limit", "query_timeout_s"):
        number = value.get(setting)
        if number is not None and not Settings.valid(setting, number):
            raise fail(
                f"{key}.{setting}", f"should be {Settings.expected(setting)}, not {number!r}."
            )
    row_limit = value.get("row_limit")
    timeout = value.get("query_timeout_s")
    dbt_project = value.get("dbt_project")
    if dbt_project is not None and (not isinstance(dbt_project, str) or not dbt_project.strip()):
        raise fail(f"{key}.dbt_project", "should be a path in quotes (the dbt project directory).")
    run_as = value.get("run_as")
    return Warehouse(
        name=name,
        spec=_expand(spec.strip(), env, lambda p: fail(f"{key}.spec", p)),
        shown_spec=spec.strip(),
        description=description.strip(),
        row_limit=row_limit,
        query_timeout_s=float(timeout) if timeout is not None else None,
        dbt_project=folder / dbt_project.strip() if dbt_project else None,
        run_as=parse_run_as(run_as, fail, f"{key}.run_as") if run_as is not None else None,
    )


def _expand(spec: str, env: Mapping[str, str], fail: Any) -> str:
    """Replace each `${NAME}` with the environment variable NAME (which must be set)."""

    def value(match: re.Match[str]) -> str:
        variable = match.group(1)
        if not _ENV_NAME.match(variable):
            raise fail(f"${{{variable}}} is not an environment variable name.")
        if variable not in env:
            raise fail(
                f"${{{variable}}} is used but the environment variable {variable} is not set; "
                "set it (in .env or the environment) or write the value in the file."
            )
        return env[variable]

    return _VARIABLE.sub(value, spec)

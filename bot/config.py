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

    [channels]
    C0123456789 = "finance"               # Slack channel id = warehouse name

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

from bot.settings import CHANNEL_ID, Settings, SettingsError
from connectors.base import ConnectorError

#: The warehouse's name when there is no config file (one warehouse, from QUERYBOT_WAREHOUSE).
SINGLE = "main"

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TOP_KEYS = {"default", "warehouses", "channels"}
_WAREHOUSE_KEYS = {"spec", "description", "row_limit", "query_timeout_s"}


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
    return DeploymentConfig({SINGLE: Warehouse(SINGLE, spec, spec)}, default=SINGLE)


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
    warehouses = {name: _warehouse(name, value, env, fail) for name, value in tables.items()}
    names = ", ".join(warehouses)

    default = raw.get("default")
    if default is not None and (not isinstance(default, str) or default not in warehouses):
        raise fail("default", f"{default!r} is not a warehouse of this file; use one of: {names}.")

    channels_raw = raw.get("channels", {})
    if not isinstance(channels_raw, dict):
        raise fail("channels", 'write it as a table: [channels] then C0123456789 = "NAME" lines.')
    channels: dict[str, str] = {}
    for channel, name in channels_raw.items():
        key = f"channels.{channel}"
        if not CHANNEL_ID.match(channel):
            raise fail(
                key,
                "not a Slack channel id; use the id (like C0123456789, from the channel's "
                "details in Slack), not its name.",
            )
        if not isinstance(name, str) or name not in warehouses:
            raise fail(key, f"{name!r} is not a warehouse of this file; use one of: {names}.")
        channels[channel] = name
    return DeploymentConfig(warehouses, default=default, channels=channels, path=path)


def _warehouse(name: str, value: Any, env: Mapping[str, str], fail: Any) -> Warehouse:
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
    return Warehouse(
        name=name,
        spec=_expand(spec.strip(), env, lambda p: fail(f"{key}.spec", p)),
        shown_spec=spec.strip(),
        description=description.strip(),
        row_limit=row_limit,
        query_timeout_s=float(timeout) if timeout is not None else None,
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

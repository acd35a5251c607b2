"""Who a Slack user is in a warehouse: the identity (a PostgreSQL or MariaDB role, a BigQuery
service account, a name with a table allowlist) their questions run as.

A warehouse of the config file (`QUERYBOT_CONFIG`) may hold a `run_as` table:

    [warehouses.sales.run_as]
    users = { U0123ABCD = "analyst_ana" }                  # listed Slack user ids
    emails = { "bo@example.com" = "sales_emea", "@example.com" = "staff" }  # address, or @domain
    groups = { S0123ABCD = "sales_team" }                  # Slack user groups (first that has them)
    unmapped = "refuse"                                    # or a role everyone else runs as

    [warehouses.sales.run_as.tables]       # only on engines without roles (DuckDB, SQLite)
    sales_emea = ["orders", "customers"]   # the tables it may read (one line per identity above)

A person is looked up in that order: their user id, their email address (from Slack's profile,
`users.info`, scope `users:read.email`), their email's domain, then the groups (in the file's
order, members read with `usergroups.users.list`); whoever none of those name gets `unmapped`,
which is "refuse" unless the file names a role. A refused person is told so before anything is
sent to the model, and nothing runs. A warehouse without `run_as` runs as the bot's own login.
Where the engine has no identities to act as, `tables` gives each identity the names of the tables
it may read (`TableAllowlist` enforces them); every identity the rules name needs one.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)

#: The `unmapped` value that refuses whoever no rule names.
REFUSE = "refuse"

#: How long an email address or a group's members are trusted before asking Slack again.
DIRECTORY_TTL_S = 300.0

_USER = re.compile(r"^[UW][A-Z0-9]{2,30}$")
_GROUP = re.compile(r"^S[A-Z0-9]{2,30}$")
_EMAIL = re.compile(r"^[^@\s]*@[^@\s]+\.[^@\s]+$")
_KEYS = {"users", "emails", "groups", "unmapped", "tables"}
#: Long enough for a BigQuery service account's email; PostgreSQL refuses names past its own
#: 63-byte limit when it acts as one (`PostgresFlavor`), rather than cut them.
_MAX_ROLE = 128


@dataclass(frozen=True)
class RunAsRules:
    """The parsed `run_as` table of one warehouse (emails and domains lower-cased)."""

    users: dict[str, str] = field(default_factory=dict)
    emails: dict[str, str] = field(default_factory=dict)
    #: (group id, role), in the file's order: the first group a person belongs to wins.
    groups: tuple[tuple[str, str], ...] = ()
    #: The role of people no rule names; None refuses them.
    unmapped: str | None = None
    #: Identity -> the tables it may read, on engines without identities; empty elsewhere.
    tables: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def roles(self) -> list[str]:
        """Every role the rules name, once each, in a stable order."""
        named = [*self.users.values(), *self.emails.values(), *(r for _, r in self.groups)]
        if self.unmapped:
            named.append(self.unmapped)
        return sorted(set(named))


def parse_run_as(value: Any, fail: Callable[[str, str], Exception], key: str) -> RunAsRules:
    """Check a `run_as` table (`key` names it in messages); raise `fail(key, problem)`."""
    if not isinstance(value, dict):
        raise fail(key, f"write it as a table: [{key}] then users, emails, groups, unmapped.")
    unknown = set(value) - _KEYS
    if unknown:
        raise fail(
            f"{key}.{sorted(unknown)[0]}",
            f"unknown setting; run_as takes {', '.join(sorted(_KEYS))}.",
        )
    unmapped = value.get("unmapped", REFUSE)
    rules = RunAsRules(
        users=_mapping(value, "users", _USER, "a Slack user id (U…)", fail, key),
        emails=_mapping(value, "emails", _EMAIL, "an email address or @domain", fail, key),
        groups=tuple(
            _mapping(value, "groups", _GROUP, "a Slack user group id (S…)", fail, key).items()
        ),
        unmapped=None if unmapped == REFUSE else _role(unmapped, fail, f"{key}.unmapped"),
    )
    if "tables" not in value:
        return rules
    return replace(rules, tables=_tables_for(rules, value["tables"], fail, f"{key}.tables"))


def _mapping(
    value: dict[str, Any],
    name: str,
    pattern: re.Pattern[str],
    what: str,
    fail: Callable[[str, str], Exception],
    key: str,
) -> dict[str, str]:
    """The `name` table of `value` (users, emails or groups): each key `what`, to a role."""
    raw = value.get(name, {})
    if not isinstance(raw, dict):
        raise fail(f"{key}.{name}", f'write it as {{ KEY = "role" }} pairs, one per {what}.')
    found: dict[str, str] = {}
    for entry, role in raw.items():
        if not pattern.match(entry):
            raise fail(f"{key}.{name}.{entry}", f"not {what}.")
        found[entry.lower() if name == "emails" else entry] = _role(
            role, fail, f"{key}.{name}.{entry}"
        )
    return found


def _tables_for(
    rules: RunAsRules, value: Any, fail: Callable[[str, str], Exception], key: str
) -> dict[str, tuple[str, ...]]:
    """The allowlists, one for each identity the rules name and none more."""
    tables = _allowlists(value, fail, key)
    for role in rules.roles():
        if role not in tables:
            raise fail(
                key, f'{role!r} (named by the rules) has no allowlist; add {role} = ["table", ...].'
            )
    for role in tables:
        if role not in rules.roles():
            raise fail(f"{key}.{role}", "no rule names this identity; remove it.")
    return tables


def _allowlists(
    value: Any, fail: Callable[[str, str], Exception], key: str
) -> dict[str, tuple[str, ...]]:
    """Identity -> table names, each list non-empty."""
    if not isinstance(value, dict) or not value:
        raise fail(key, f'write it as a table: [{key}] then identity = ["table", ...] lines.')
    found: dict[str, tuple[str, ...]] = {}
    for role, names in value.items():
        where = f"{key}.{_role(role, fail, key)}"
        if (
            not isinstance(names, list)
            or not names
            or not all(isinstance(n, str) and n.strip() and "\0" not in n for n in names)
        ):
            raise fail(where, 'should be a list of table names in quotes, e.g. ["orders"].')
        found[role] = tuple(n.strip() for n in names)
    return found


def _role(role: Any, fail: Callable[[str, str], Exception], key: str) -> str:
    if not isinstance(role, str) or not role.strip() or len(role) > _MAX_ROLE or "\0" in role:
        raise fail(key, f"should be a role name in quotes (1-{_MAX_ROLE} characters).")
    return role


@dataclass(frozen=True)
class RunAs:
    """What one person's question runs as: `role`, or (`role` "") a refusal saying why."""

    role: str = ""
    #: How the role was found ("listed", "email", "group S0123", "unmapped"), for the log.
    how: str = ""
    refusal: str = ""


#: What an unmapped person is told (plain text).
REFUSED = (
    "Your Slack account is not mapped to an identity in this warehouse, so I cannot answer data "
    "questions for you here: nothing was sent to the model and nothing ran. Ask whoever runs "
    "querybot to add you to the run_as rules of its config file (by your Slack user id, your "
    "email address or a Slack user group)."
)


class Directory:
    """Slack's view of people: a user's email address and a user group's members, each read
    once per `DIRECTORY_TTL_S`. A failed read keeps the last known answer (or none: fail
    closed)."""

    def __init__(self, client: WebClient) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], tuple[float, Any]] = {}

    def email(self, user: str) -> str:
        """The user's email address, lower-cased; "" when Slack does not say."""

        def read() -> str:
            profile = (self.client.users_info(user=user).get("user") or {}).get("profile") or {}
            return str(profile.get("email") or "").lower()

        return str(self._cached(("email", user), read, ""))

    def members(self, group: str) -> frozenset[str]:
        def read() -> frozenset[str]:
            return frozenset(self.client.usergroups_users_list(usergroup=group).get("users") or [])

        found = self._cached(("group", group), read, frozenset())
        return found if isinstance(found, frozenset) else frozenset()

    def _cached(self, key: tuple[str, str], read: Callable[[], Any], empty: Any) -> Any:
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(key)
        if cached and now - cached[0] < DIRECTORY_TTL_S:
            return cached[1]
        try:
            value = read()
        except SlackApiError:
            log.exception("Could not read %s %s from Slack", *key)
            return cached[1] if cached else empty
        with self._lock:
            self._cache[key] = (now, value)
        return value

    def run_as(self, rules: RunAsRules | None, user: str) -> RunAs:
        """What `user`'s questions run as under `rules` (None: the connector's login)."""
        if rules is None:
            return RunAs(how="login")
        if user in rules.users:
            return RunAs(rules.users[user], "listed")
        if rules.emails:
            email = self.email(user)
            if email and email in rules.emails:
                return RunAs(rules.emails[email], "email")
            domain = "@" + email.rpartition("@")[2] if email else ""
            if domain and domain in rules.emails:
                return RunAs(rules.emails[domain], "email domain")
        for group, role in rules.groups:
            if user in self.members(group):
                return RunAs(role, f"group {group}")
        if rules.unmapped:
            return RunAs(rules.unmapped, "unmapped")
        return RunAs(refusal=REFUSED)

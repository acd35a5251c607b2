"""The stand-in's workspace directory: `auth.test`, and `usergroups.users.list`, `users.info`,
`conversations.info` and `users.conversations`, which answer from `usergroups`, `emails`,
`channels` and `members` (a test fills them). `users.conversations` refuses a type whose read
scope the app lacks (`missing_scope`) and a `limit` of 1,000 or more (`invalid_limit`), as
Slack does.

`users.info` answers a person's time zone as Slack does: `tz` (an IANA name), `tz_label` (its
name now, "Pacific Standard Time") and `tz_offset` (seconds east of UTC now, daylight saving
included), from `time_zones` (`set_time_zone`), else Slack's own default for a new account,
`DEFAULT_TZ` (America/Los_Angeles: not UTC, so a bot that forgets the zone is caught)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from tests.support.standin_records import BOT_ID, BOT_USER_ID, TEAM_ID, Refused

#: The scope `users.conversations` needs for each conversation type it is asked for.
TYPE_SCOPES = {
    "public_channel": "channels:read",
    "private_channel": "groups:read",
    "mpim": "mpim:read",
    "im": "im:read",
}
#: `users.conversations` takes a limit under 1,000.
MAX_LIMIT = 999
#: The zone Slack gives an account whose owner never set one.
DEFAULT_TZ = "America/Los_Angeles"
#: Long names of the zones' abbreviations, for `tz_label` (else the IANA name).
TZ_LABELS = {
    "PST": "Pacific Standard Time",
    "PDT": "Pacific Daylight Time",
    "MST": "Mountain Standard Time",
    "MDT": "Mountain Daylight Time",
    "CST": "Central Standard Time",
    "CDT": "Central Daylight Time",
    "EST": "Eastern Standard Time",
    "EDT": "Eastern Daylight Time",
    "GMT": "Greenwich Mean Time",
    "BST": "British Summer Time",
    "UTC": "Coordinated Universal Time",
    "CET": "Central European Time",
    "CEST": "Central European Summer Time",
    "EET": "Eastern European Time",
    "EEST": "Eastern European Summer Time",
    "IST": "India Standard Time",
    "JST": "Japan Standard Time",
    "AEST": "Australian Eastern Standard Time",
    "AEDT": "Australian Eastern Daylight Time",
}


class DirectoryMethods:
    """Mixed into `SlackStandin`, whose `__init__` sets up the state these methods use."""

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://standin.slack.com/",
            "team": "Stand-in",
            "user": "querybot",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def set_time_zone(self, user: str, tz: str) -> None:
        """Give `user` the IANA time zone `tz` (they become known to `users.info`)."""
        ZoneInfo(tz)  # an unknown zone fails here, not in the bot
        with self._lock:
            self.time_zones[user] = tz
            self.emails.setdefault(user, "")

    def deactivate(self, user: str) -> None:
        """`user` leaves the workspace: `users.info` says `deleted`, as Slack does."""
        with self._lock:
            self.deactivated.add(user)

    def _usergroup_users(self, params: dict[str, Any]) -> dict[str, Any]:
        group = str(params.get("usergroup") or "")
        if group not in self.usergroups:
            raise Refused("no_such_subteam", f"no usergroup {group!r}")
        return {"ok": True, "users": list(self.usergroups[group])}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user") or "")
        if user not in self.emails:
            raise Refused("user_not_found", f"no user {user!r}")
        profile = {"email": self.emails[user]} if self.emails[user] else {}
        info = {"id": user, "team_id": TEAM_ID, "profile": profile}
        if user in self.deactivated:
            info["deleted"] = True
        return {"ok": True, "user": {**info, **time_zone(self.time_zones.get(user, DEFAULT_TZ))}}

    def _conversation_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        if not channel:
            raise Refused("channel_not_found", "no channel")
        info = {
            "id": channel,
            "is_channel": True,
            "is_ext_shared": False,
            "is_shared": False,
            "is_org_shared": False,
            **self.channels.get(channel, {}),
        }
        return {"ok": True, "channel": info}

    def _users_conversations(self, params: dict[str, Any]) -> dict[str, Any]:
        """The channels of `members` the user is in (one page: the stand-in's are few)."""
        user = str(params.get("user") or "")
        types = str(params.get("types") or "public_channel").split(",")
        for kind in types:
            if kind not in TYPE_SCOPES:
                raise Refused("invalid_types", f"unknown type {kind!r}")
            if TYPE_SCOPES[kind] not in self.scopes:
                injected = TYPE_SCOPES[kind] in self._revoked
                raise Refused(
                    "missing_scope", f"{kind} needs {TYPE_SCOPES[kind]}", injected=injected
                )
        if int(params.get("limit") or 100) > MAX_LIMIT:
            raise Refused("invalid_limit", f"limit {params.get('limit')} is not under 1000")
        if user and not user.startswith(("U", "W")):
            raise Refused("user_not_found", f"no user {user!r}")
        found = [
            {"id": channel, "is_channel": True}
            for channel, people in sorted(self.members.items())
            if user in people
        ]
        return {"ok": True, "channels": found, "response_metadata": {"next_cursor": ""}}


def time_zone(tz: str, now: datetime | None = None) -> dict[str, Any]:
    """`tz`, `tz_label` and `tz_offset` as Slack gives them for the IANA zone `tz` at `now`."""
    local = (now or datetime.now(ZoneInfo("UTC"))).astimezone(ZoneInfo(tz))
    offset = local.utcoffset()
    abbreviation = local.tzname() or ""
    return {
        "tz": tz,
        "tz_label": TZ_LABELS.get(abbreviation, tz),
        "tz_offset": int(offset.total_seconds()) if offset else 0,
    }

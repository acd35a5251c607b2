"""The stand-in's workspace directory: `auth.test`, and `usergroups.users.list`, `users.info` and
`conversations.info`, which answer from `usergroups`, `emails` and `channels` (a test fills
them)."""

from __future__ import annotations

from typing import Any

from tests.support.standin_records import BOT_ID, BOT_USER_ID, TEAM_ID, Refused


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
        return {"ok": True, "user": {"id": user, "team_id": TEAM_ID, "profile": profile}}

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

"""`QUERYBOT_APPROVERS` and `QUERYBOT_NO_SELF_APPROVAL` as a rule: who may approve, in data.

Apart from the `Approvers` that apply it, so the settings can parse it without the store."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.blocks import mention

_USER = re.compile(r"[UW][A-Z0-9]{2,30}")
_GROUP = re.compile(r"S[A-Z0-9]{2,30}")


@dataclass(frozen=True)
class ApproverRule:
    """The parsed `QUERYBOT_APPROVERS` and `QUERYBOT_NO_SELF_APPROVAL`."""

    anyone: bool = True
    requester: bool = False
    users: frozenset[str] = frozenset()
    groups: tuple[str, ...] = ()
    no_self_approval: bool = False

    @classmethod
    def parse(cls, text: str, *, no_self_approval: bool = False) -> ApproverRule:
        """Raise ValueError naming any entry that is not a keyword, user id or group id."""
        entries = [e.strip() for e in (text or "anyone").split(",") if e.strip()]
        bad = [
            e
            for e in entries
            if e not in {"anyone", "requester"}
            and not _USER.fullmatch(e)
            and not _GROUP.fullmatch(e)
        ]
        if bad:
            raise ValueError(
                f"QUERYBOT_APPROVERS: {', '.join(bad)} is not anyone, requester, a user id (U…) "
                "or a user group id (S…)"
            )
        return cls(
            anyone="anyone" in entries,
            requester="requester" in entries,
            users=frozenset(e for e in entries if _USER.fullmatch(e)),
            groups=tuple(e for e in entries if _GROUP.fullmatch(e)),
            no_self_approval=no_self_approval,
        )

    def describe(self, requested_by: str) -> str:
        """Who may approve, in words (mrkdwn)."""
        who = []
        if self.requester:
            who.append(f"the person who asked ({mention(requested_by)})")
        who += [mention(u) for u in sorted(self.users)]
        who += [f"members of <!subteam^{g}>" for g in self.groups]
        return ", ".join(who[:-1]) + (" or " if len(who) > 1 else "") + who[-1] if who else "nobody"

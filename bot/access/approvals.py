"""Who may approve, reject, edit and cancel a proposal (`QUERYBOT_APPROVERS`,
`QUERYBOT_NO_SELF_APPROVAL`).

`QUERYBOT_APPROVERS` is a comma list of any of: `anyone` (the default), `requester` (the person
who asked), Slack user ids (`U…`/`W…`) and user group ids (`S…`, members read with
`usergroups.users.list` and cached). A person may approve when any entry lets them.
`QUERYBOT_NO_SELF_APPROVAL=true` then forbids approving your own question, or your own edit.

Rejecting and editing are open to whoever may approve and, always, to the person who asked: they
may withdraw or correct their own question even when someone else must approve it. Cancelling a
running query is open to the same people and to whoever approved it.
"""

from __future__ import annotations

import logging
import threading
import time

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.access.approver_rule import ApproverRule
from bot.store.base import ProposalRecord

log = logging.getLogger(__name__)

#: How long a user group's members are trusted before asking Slack again.
GROUP_TTL_S = 300.0


class Approvers:
    """Applies an `ApproverRule`; reads user groups from Slack with a small cache."""

    def __init__(self, rule: ApproverRule, client: WebClient) -> None:
        self.rule = rule
        self.client = client
        self._lock = threading.Lock()
        self._groups: dict[str, tuple[float, frozenset[str]]] = {}

    def why_not_approve(self, user: str, record: ProposalRecord) -> str | None:
        """None when `user` may approve `record`, else why not (mrkdwn, for an ephemeral)."""
        if self.rule.no_self_approval and user == record.edited_by:
            return "You wrote this edit, so someone else must approve it. Nothing was run."
        if self.rule.no_self_approval and user == record.requested_by:
            return "You asked this question, so someone else must approve it. Nothing was run."
        if self._listed(user, record):
            return None
        return (
            f"Only {self.rule.describe(record.requested_by)} can approve this query. "
            "Nothing was run."
        )

    def why_not_decide(self, user: str, record: ProposalRecord, *, approved: bool) -> str | None:
        """None when `user` may approve (or reject) `record`. It depends only on who clicked and
        on who asked and edited, never on the status, so it holds for every click."""
        if approved:
            return self.why_not_approve(user, record)
        return self.why_not_reject_or_edit(user, record, "reject")

    def why_not_reject_or_edit(self, user: str, record: ProposalRecord, verb: str) -> str | None:
        """None when `user` may reject (or edit) `record`: the asker always may."""
        if user == record.requested_by or self._listed(user, record):
            return None
        return (
            f"Only the person who asked or {self.rule.describe(record.requested_by)} can "
            f"{verb} this query. Nothing changed."
        )

    def why_not_cancel(self, user: str, record: ProposalRecord) -> str | None:
        """None when `user` may stop `record`'s running query: the asker and the approver
        always may."""
        if user in (record.requested_by, record.decided_by) or self._listed(user, record):
            return None
        return (
            f"Only the person who asked, the person who approved, or "
            f"{self.rule.describe(record.requested_by)} can cancel this query. It keeps running."
        )

    def _listed(self, user: str, record: ProposalRecord) -> bool:
        rule = self.rule
        if rule.anyone or user in rule.users:
            return True
        if rule.requester and user == record.requested_by:
            return True
        return any(user in self._members(group) for group in rule.groups)

    def _members(self, group: str) -> frozenset[str]:
        now = time.monotonic()
        with self._lock:
            cached = self._groups.get(group)
        if cached and now - cached[0] < GROUP_TTL_S:
            return cached[1]
        try:
            users = self.client.usergroups_users_list(usergroup=group).get("users") or []
        except SlackApiError:
            # Fail closed, but keep the last known members rather than locking everyone out.
            log.exception("Could not read the members of user group %s", group)
            return cached[1] if cached else frozenset()
        members = frozenset(users)
        with self._lock:
            self._groups[group] = (now, members)
        return members

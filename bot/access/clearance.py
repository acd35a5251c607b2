"""Who may act on a proposal in a channel whose questions run as the asker (`run_as`):
only someone whose own warehouse identity could run its query.

Three actions need it, each with its own words:

- **approve**: the query would run, so the approver must be able to run it themselves, and the
  asker must still be the identity the proposal runs as;
- **edit**: the Edit SQL box shows the SQL, and what the checks say of an edit (refusals naming
  tables and columns of the asker's view) goes to the thread; the asker's identity must still
  be the proposal's, or the edited proposal could never run;
- **explain**: "How did you get this?" shows the question's recorded steps (drafts, refusals,
  the SQL); the answer was made as the asker's identity then, so only the reader's identity is
  checked.

"Could run it" means: mapped to an identity by the rules, and that identity may read every
table the query reads, as the warehouse says (`Agent.unreadable`: a role's grants, a service
account's IAM, querybot's table list). A warehouse without `run_as` rules lets everyone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot import blocks
from bot.access.identity import Directory
from bot.blocks.base import names
from bot.routing import Router
from bot.store.base import ProposalRecord
from connectors.base import ConnectorError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Action:
    """What a person tried, and what they are told when their identity may not (mrkdwn)."""

    #: Whether the asker must still map to the identity the proposal runs as.
    asker_checked: bool
    #: Their identity has changed since the proposal.
    asker_changed: str
    #: The person who clicked is mapped to no identity.
    unmapped: str
    #: Their identity may not read some tables: `{role}` and `{tables}` are filled in.
    unreadable: str
    #: The warehouse could not say: `{why}` is filled in.
    unknown: str


APPROVE = Action(
    asker_checked=True,
    asker_changed=(
        "The access of the person who asked has changed since this was proposed (the run_as "
        "rules or their groups changed), so nothing was run. Ask the question again to get a "
        "proposal that runs with their access as it is now."
    ),
    unmapped=(
        "You can approve only queries you could run yourself, and your Slack account is not "
        "mapped to an identity in this warehouse. Nothing was run."
    ),
    unreadable=(
        "You can approve only queries you could run yourself, and your access (`{role}`) "
        "cannot read {tables}. Nothing was run; ask someone who can read them to approve."
    ),
    unknown=(
        "I could not check what your access may read ({why}), so nothing was run. Try again "
        "in a minute, or ask someone else to approve."
    ),
)

EDIT = Action(
    asker_checked=True,
    asker_changed=(
        "The access of the person who asked has changed since this was proposed (the run_as "
        "rules or their groups changed), so this proposal can no longer run and nothing "
        "changed. Ask the question again to get a proposal that runs with their access as it "
        "is now."
    ),
    unmapped=(
        "You can edit only queries you could run yourself, and your Slack account is not "
        "mapped to an identity in this warehouse, so nothing changed. Ask whoever runs "
        "querybot to add you to the run_as rules of its config file."
    ),
    unreadable=(
        "You can edit only queries you could run yourself, and your access (`{role}`) cannot "
        "read {tables}, so nothing changed. Ask someone who can read them to edit it."
    ),
    unknown=(
        "I could not check what your access may read ({why}), so nothing changed. Try again "
        "in a minute."
    ),
)

EXPLAIN = Action(
    asker_checked=False,
    asker_changed="",
    unmapped=(
        "I can show how an answer was made only to people who could run its query themselves, "
        "and your Slack account is not mapped to an identity in this warehouse. Ask whoever "
        "runs querybot to add you to the run_as rules of its config file, or ask the person "
        "who asked."
    ),
    unreadable=(
        "I can show how an answer was made only to people who could run its query themselves, "
        "and your access (`{role}`) cannot read {tables}. Ask someone who can read them, or ask "
        "your own question."
    ),
    unknown=(
        "I could not check what your access may read ({why}), so I cannot show how this answer "
        "was made. Try again in a minute."
    ),
)


class Clearance:
    """Applies an `Action`'s rule to a click (asks Slack and the warehouse: at most a few
    calls, so a listener's thread may call it)."""

    def __init__(self, router: Router, identities: Directory) -> None:
        self.router = router
        self.identities = identities

    def why_not(self, action: Action, record: ProposalRecord, user: str) -> str | None:
        """None when `user` may do `action` on `record`, else why not (mrkdwn, for an
        ephemeral)."""
        route = self.router.route(record.thread_id)
        if route.agent is None or route.run_as is None:
            return None
        if action.asker_checked:
            asker = self.identities.run_as(route.run_as, record.requested_by)
            if asker.role != record.proposal.run_as:
                return action.asker_changed
        run_as = self.identities.run_as(route.run_as, user)
        if run_as.refusal:
            return action.unmapped
        try:
            unreadable = route.agent.unreadable(run_as.role, record.proposal.tables)
        except ConnectorError as exc:
            log.warning("Could not check what %s may read: %s", run_as.role, exc.message)
            return action.unknown.format(why=blocks.escape(exc.message))
        if not unreadable:
            return None
        log.info("%s may not read %s: refused their click", user, ", ".join(unreadable))
        return action.unreadable.format(role=blocks.escape(run_as.role), tables=names(unreadable))

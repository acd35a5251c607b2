"""The suggested prompts of a direct message with the bot (the messages tab, or a thread of the
older assistant view), from the warehouse that answers it: its approved examples, golden
questions and dbt metrics (`agent.suggestions`); a workspace that refuses them is told once."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.evaluation.golden import GoldenError, GoldenSet, load_golden
from agent.suggestions import (
    Suggestion,
    example_questions,
    golden_questions,
    metric_questions,
    suggestions,
)
from bot.access.identity import Directory
from bot.blocks.attachments import Refusals
from bot.pane_setup import ADD
from bot.routing import Router
from bot.slack_thread import SlackThread

log = logging.getLogger(__name__)

#: The heading Slack shows above the prompts.
TITLE = "Questions this warehouse answers"


class SuggestedPrompts:
    """Prompts for the warehouse each direct message goes to, as the person may ask it."""

    def __init__(
        self, router: Router, golden: Sequence[GoldenSet], directory: Directory | None = None
    ) -> None:
        self.router = router
        self.golden = golden
        self.directory = directory
        self._refused = Refusals()

    def for_person(self, team: str, channel: str, user: str) -> list[Suggestion]:
        """The prompts for `user` in `channel` (their DM with the bot): none when no warehouse
        answers it. Under run_as rules only the examples asked as `user`'s own identity, since
        golden questions and metrics may read tables that identity cannot."""
        route = self.router.route(SlackThread(team=team, channel=channel, ts="").id)
        agent = route.agent
        if agent is None:
            return []
        if route.run_as is not None:
            run_as = self.directory.run_as(route.run_as, user) if self.directory else None
            if run_as is None or not run_as.role:
                return []
            return suggestions(example_questions(agent.deps, run_as.role))
        name = next((n for n, a in self.router.agents.items() if a is agent), "")
        spec = (
            self.router.config.warehouses[name].spec
            if name in self.router.config.warehouses
            else ""
        )
        sets = [s for s in self.golden if s.warehouse in {name, spec}]
        return suggestions(
            example_questions(agent.deps), golden_questions(sets), metric_questions(agent.deps)
        )

    def send(
        self, client: WebClient, team: str, channel: str, user: str, thread_ts: str | None = None
    ) -> None:
        """Set the prompts of `channel` (the agent view: no `thread_ts`), or of the assistant
        thread `thread_ts`. Prompts are a courtesy: a refusal is logged, never raised."""
        if self._refused.refused(team):
            return
        prompts = self.for_person(team, channel, user)
        if not prompts:
            return
        try:
            client.assistant_threads_setSuggestedPrompts(
                channel_id=channel,
                thread_ts=thread_ts,
                title=TITLE,
                prompts=[{"title": p.title, "message": p.message} for p in prompts],
            )
        except SlackApiError as exc:
            error = str(exc.response.get("error") or exc.response.status_code)
            if error != "missing_scope":
                log.info("Slack refused suggested prompts in %s (%s)", channel, error)
            elif self._refused.note(team):
                log.warning(
                    "Workspace %s refused suggested prompts (missing_scope): %s.", team, ADD
                )
        except Exception:
            log.info("Could not set suggested prompts in %s", channel, exc_info=True)


def golden_sets(folder: Path) -> list[GoldenSet]:
    """The golden sets in `folder` (none when it is missing); one that cannot be read is logged
    and left out: suggestions must not stop the bot."""
    sets = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            sets.append(load_golden(path))
        except GoldenError as exc:
            log.warning("Not suggesting the questions of %s: %s", path, exc)
    return sets

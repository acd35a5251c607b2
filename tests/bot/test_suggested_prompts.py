"""Which prompts a direct message is offered: by the warehouse that answers it, as the person
may ask it; an app from an older manifest is told at start what to add."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent.semantic.semantic_manifest import Metric
from agent.suggestions import metric_questions
from bot.access.identity import RunAs
from bot.app import build_app
from bot.routing import Route
from bot.settings import Settings
from bot.store.sqlite import SqliteStore
from bot.suggested_prompts import SuggestedPrompts
from tests.support.fake_agent import FakeAgent, routed
from tests.support.standin import SlackStandin


def test_metrics_are_offered_by_label_else_by_name() -> None:
    layer = [Metric("revenue", "simple", label="Revenue"), Metric("order_count", "simple")]
    deps = SimpleNamespace(project=SimpleNamespace(current=lambda: SimpleNamespace(semantic=layer)))
    assert metric_questions(deps) == ["What is Revenue?", "What is order count?"]  # type: ignore[arg-type]
    assert metric_questions(SimpleNamespace(project=None)) == []  # type: ignore[arg-type]


class Roles:
    """A directory that maps Alice to the analyst role and nobody else."""

    def run_as(self, rules: object, user: str) -> RunAs:
        return RunAs("analyst", "listed") if user == "UALICE" else RunAs(how="unmapped")


def test_under_run_as_only_the_persons_own_identitys_examples() -> None:
    agent = FakeAgent()
    agent.deps.examples.add("Payroll by team?", "SELECT 1", tables=[], columns=[], approved_by="U")
    agent.deps.examples.add(
        "My region's orders?", "SELECT 1", tables=[], columns=[], approved_by="U", run_as="analyst"
    )
    rules = object()  # any rules: the directory above decides

    def override(thread_id: str) -> Route:
        return Route(thread_id, agent, run_as=rules)  # type: ignore[arg-type]

    prompts = SuggestedPrompts(routed(agent, override), [], Roles())  # type: ignore[arg-type]
    assert [p.message for p in prompts.for_person("T1", "DALICE", "UALICE")] == [
        "My region's orders?"
    ]
    assert prompts.for_person("T1", "DBOB", "UBOB") == []  # unmapped: nothing to offer


def test_an_app_without_the_scope_is_told_at_start(
    slack: SlackStandin, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    slack.revoke_scope("assistant:write")
    settings = Settings(slack_bot_token="xoxb-test", slack_api_url=slack.url)
    with caplog.at_level(logging.WARNING, logger="bot.app"):
        app = build_app(settings, routed(FakeAgent()), SqliteStore(tmp_path / "s.sqlite"))
    app.stop_background()
    [said] = [r.getMessage() for r in caplog.records if r.name == "bot.app"]
    assert said.startswith("The Slack app was created from an older manifest")
    assert "assistant:write" in said and "manifest.yaml" in said

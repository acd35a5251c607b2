"""How many failed tries pause a schedule is bounded by the tries one run has (DBOS's attempts
of its step): a setting above it would let a run's last try fail with no one told."""

from __future__ import annotations

import pytest

from bot.schedules.settings import MAX_TRIES
from bot.settings import Settings, SettingsError


def test_a_schedule_pauses_within_the_tries_of_one_run() -> None:
    most = Settings.from_env({"QUERYBOT_SCHEDULE_MAX_FAILURES": str(MAX_TRIES)})
    assert most.schedule_max_failures == MAX_TRIES
    with pytest.raises(SettingsError, match="QUERYBOT_SCHEDULE_MAX_FAILURES"):
        Settings.from_env({"QUERYBOT_SCHEDULE_MAX_FAILURES": str(MAX_TRIES + 1)})

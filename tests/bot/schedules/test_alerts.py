"""bot.schedules.alerts: an alert posts when it starts firing and once when it clears, and
stays quiet otherwise; the change since the last run in words."""

from __future__ import annotations

import pytest

from bot.schedules.alerts import change_since, judge
from bot.schedules.records import Alert


def figures(value: float | None, rows: int = 1, *, firing: bool = False) -> dict[str, object]:
    return {"value": value, "rows": rows, "firing": firing}


def test_an_alert_fires_stays_quiet_and_clears_once() -> None:
    above = Alert("above", 50)
    fired = judge(above, {}, figures(60))
    assert (fired.post, fired.firing) == (True, True)
    assert fired.why == "Alert: 60 is above 50."
    still = judge(above, figures(60, firing=True), figures(70))
    assert (still.post, still.firing) == (False, True), "no second post while it fires"
    cleared = judge(above, figures(70, firing=True), figures(40))
    assert (cleared.post, cleared.firing) == (True, False)
    assert cleared.why == "Cleared: 40 now."
    quiet = judge(above, figures(40), figures(45))
    assert (quiet.post, quiet.firing) == (False, False)


@pytest.mark.parametrize(
    ("alert", "last", "now", "fires"),
    [
        (Alert("below", 10), figures(20), figures(5), True),
        (Alert("change", 25), figures(100), figures(130), True),
        (Alert("change", 25), figures(100), figures(80), False),
        (Alert("change", 25), {}, figures(80), False),
        (Alert("rows_appear"), figures(None, 0), figures(None, 3), True),
        (Alert("rows_disappear"), figures(None, 3), figures(None, 0), True),
        (Alert("above", 1), figures(None, 0), figures(None, 0), False),
    ],
)
def test_each_kind_of_alert(
    alert: Alert, last: dict[str, object], now: dict[str, object], fires: bool
) -> None:
    assert judge(alert, last, now).firing is fires


def test_the_change_since_the_last_run() -> None:
    assert change_since({}, figures(5)) == ""
    assert change_since(figures(200), figures(250)) == "+25.0% since the last run (200 → 250)."
    assert change_since(figures(7), figures(7)) == "Unchanged since the last run (7)."
    assert change_since(figures(None, 2), figures(None, 5)) == "2 → 5 rows since the last run."

"""The day the suite's demo warehouse and bots are asked on: the demo then ends on 2026-10-31,
the fixed calendar its data is generated on (no shift), so expectations written against that
calendar hold on any real date."""

from __future__ import annotations

from datetime import date

#: QUERYBOT_TODAY for tests: the demo's history ends the day before.
TODAY = date(2026, 11, 1)

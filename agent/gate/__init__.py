"""The SQL gate: one read-only query over known tables, normalised and row-capped, or a reason.

`check_sql(sql, schema, row_limit=...)` returns a `Verdict` and never raises; `GateSchema` holds
the tables a deployment exposes. See `check.py` for the order of checks.
"""

from agent.gate.check import check_sql
from agent.gate.schema import GateSchema
from agent.gate.verdict import Reason, Verdict

__all__ = ["GateSchema", "Reason", "Verdict", "check_sql"]

"""SQL-injection payloads, alone and spliced into SELECTs in string and numeric positions: the
gate lets them through only as harmless reads of the exposed tables (the canary tests run them)."""

from __future__ import annotations

import pytest

from tests.agent.gate.conftest import PayloadVerdicts
from tests.support import canary, corpora, oracle

pytestmark = pytest.mark.slow  # checking every payload in a dialect: about 13 s


@pytest.mark.parametrize("dialect", corpora.DIALECTS)
def test_payloads_pass_only_as_harmless_reads(
    dialect: str, payload_verdicts: PayloadVerdicts
) -> None:
    verdicts = payload_verdicts[dialect]
    assert len(verdicts) == len(corpora.SPLICES) * len(corpora.payloads()) > 3000
    exposed = set(canary.table_names(dialect).values())
    problems = []
    for sql, verdict in verdicts:
        if not verdict.ok:
            assert verdict.reasons and "internal_error" not in [r.code for r in verdict.reasons]
            continue
        harm = oracle.harm(verdict.sql, dialect)
        if harm or not set(verdict.tables) <= exposed:
            problems.append(f"{sql!r} -> {verdict.sql!r}: {harm or verdict.tables}")
    assert not problems, "\n".join(problems[:20])

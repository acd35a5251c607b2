"""The catalogue of harmful statements: each is rejected, for the intended reason, whether the
schema is known or not."""

from __future__ import annotations

from collections import Counter

import pytest

from agent.gate import GateSchema, check_sql
from tests.support import canary, corpora
from tests.support.fixture_files import Harmful, load_harmful

CATALOGUE = load_harmful()


def test_catalogue_covers_every_dialect() -> None:
    per_dialect = Counter(h.dialect for h in CATALOGUE)
    assert len(CATALOGUE) >= 200
    assert set(per_dialect) == set(corpora.DIALECTS)
    assert min(per_dialect.values()) >= 30, per_dialect
    assert len({(h.dialect, h.sql) for h in CATALOGUE}) == len(CATALOGUE), "duplicates"


@pytest.mark.parametrize("harmful", CATALOGUE, ids=lambda h: f"{h.dialect}-line{h.line}")
def test_harmful_statement_is_rejected(harmful: Harmful) -> None:
    known = check_sql(harmful.sql, canary.schema(harmful.dialect))
    unknown = check_sql(harmful.sql, GateSchema.from_tables([], harmful.dialect))
    assert not known.ok and not unknown.ok
    assert harmful.code in [r.code for r in known.reasons], known.reasons
    assert "internal_error" not in [r.code for r in known.reasons + unknown.reasons]

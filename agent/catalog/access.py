"""What a question asked under a warehouse identity (run_as) may show its model: the catalog as
that identity sees it.

The catalog is read with the bot's login, which may list tables the identity may not read, and
whose statistics and scans see rows that row-level security hides from the identity. So the view
of a question asked as an identity (`Access.view`) keeps:

- only the tables the identity may read, as the warehouse says (`ActsAs.unreadable`, asked once
  for every table of the catalog, and kept per identity for `READABLE_TTL_S`);
- no value profile, sampled value or row count at all: with row-level security the login's
  values may include rows the identity cannot see, and nothing in the listing says which tables
  have policies, so none is shown (fail closed). Documented value lists (a dbt project's
  accepted values) stay: they are the team's description of the column, not rows;
- only the documented join keys between tables it keeps.

Everything the model is shown, the gate's schema and the follow-ups are built from the view, so
a table the identity may not read is unknown to them all. Without an identity the view is the
catalog itself.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

from agent.catalog.documentation import Documentation, same_table
from agent.catalog.profiling import table_key
from agent.catalog.snapshot import CatalogSnapshot
from connectors.base import (
    ActsAs,
    Connector,
    ConnectorError,
    PermissionDenied,
    TableInfo,
    acts_as,
)

#: How long what an identity may read is trusted before the warehouse is asked again.
READABLE_TTL_S = 60.0


@dataclass(frozen=True)
class _Seen:
    at: float
    #: The catalog snapshot the view was made of, the keys of the tables it leaves out, and
    #: the view.
    base: CatalogSnapshot
    hidden: frozenset[str]
    view: CatalogSnapshot


class AccessUnknown(PermissionDenied):
    """The warehouse could not say what an identity may read: nothing is shown."""


class Access:
    """Per-identity views of the catalog (see the module docstring). Thread-safe."""

    def __init__(self, connector: Connector, *, ttl_s: float = READABLE_TTL_S) -> None:
        self.connector = connector
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._views: dict[str, _Seen] = {}

    def view(self, snapshot: CatalogSnapshot, identity: str) -> CatalogSnapshot:
        """`snapshot` as a question asked as `identity` may see it (itself when `identity` is
        ""). Raises ConnectorError when the warehouse cannot say what `identity` may read (the
        connector acts as no identity, the login may not assume it): nothing is shown then."""
        if not identity:
            return snapshot
        now = time.monotonic()
        with self._lock:
            seen = self._views.get(identity)
        if seen is not None and seen.base is snapshot and now - seen.at < self.ttl_s:
            return seen.view
        connector = self.connector
        if not acts_as(connector) or not isinstance(connector, ActsAs):
            raise AccessUnknown(
                f"I could not check what your access may read: the {connector.name} warehouse "
                "cannot run queries as another identity."
            )
        try:
            hidden = connector.unreadable(identity, [t.name for t in snapshot.tables])
        except ConnectorError as exc:
            raise AccessUnknown(
                f"I could not check what your access may read: {exc.message} {exc.hint}".strip()
            ) from exc
        keys = frozenset(table_key(name) for name in hidden)
        if seen is not None and seen.base is snapshot and seen.hidden == keys:
            view = seen.view  # the same view: what is derived from it (an index) stays valid
        else:
            view = readable_view(snapshot, keys)
        with self._lock:
            self._views[identity] = _Seen(now, snapshot, keys, view)
        return view


def readable_view(snapshot: CatalogSnapshot, hidden: frozenset[str]) -> CatalogSnapshot:
    """`snapshot` without the tables keyed in `hidden`, without profiles and row counts, and
    with only the documented join keys between the tables it keeps."""
    tables = tuple(
        replace(t, row_count=None) for t in snapshot.tables if table_key(t.name) not in hidden
    )
    return CatalogSnapshot(
        tables,
        snapshot.dialect,
        {},
        snapshot.functions,
        _documentation(snapshot.documentation, tables),
        snapshot.types,
    )


def _documentation(documentation: Documentation, tables: tuple[TableInfo, ...]) -> Documentation:
    """What the team documented about `tables` only."""
    if not documentation:
        return documentation

    def kept(name: str) -> bool:
        return any(same_table(name, t.name) for t in tables)

    return replace(
        documentation,
        tables={k: doc for k, doc in documentation.tables.items() if kept(k)},
        joins=tuple(j for j in documentation.joins if kept(j.table) and kept(j.other)),
    )

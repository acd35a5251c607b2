"""SqlConnector on MariaDB running as a mapped identity (`RunContext.identity`): `SET ROLE`
inside the run's read-only transaction, so the role's grants decide what the statement reads,
and the connection goes back to the login's default role after every run, failed or not;
`unreadable` asks the server which tables a role may not read, without reading a row."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from connectors.base import PermissionDenied, QueryTimeout, RunContext, acts_as
from connectors.sql.connector import SqlConnector
from tests.support.mariadb_roles import SALARIES, SALES, RoleWarehouse, quoted, role_warehouse

READ_SALES = "SELECT region, amount FROM sales ORDER BY amount"
READ_SALARIES = "SELECT name, salary FROM salaries"
WHO = "SELECT CURRENT_ROLE()"


@pytest.fixture(scope="module")
def warehouse() -> Iterator[RoleWarehouse]:
    with role_warehouse() as found:
        yield found


@pytest.fixture(scope="module")
def connector(warehouse: RoleWarehouse) -> Iterator[SqlConnector]:
    # one connection, so every run below reuses the connection the one before it used
    connector = SqlConnector(warehouse.url, pool_size=1)
    yield connector
    connector.close()


def run(connector: SqlConnector, sql: str, identity: str = "") -> list[tuple[object, ...]]:
    context = RunContext(identity=identity)
    return connector.run(sql, max_rows=100, timeout_s=10, context=context).rows


def test_each_role_reads_what_its_grants_allow(
    connector: SqlConnector, warehouse: RoleWarehouse
) -> None:
    assert acts_as(connector)
    assert run(connector, READ_SALES, warehouse.east) == SALES
    assert run(connector, READ_SALARIES, warehouse.west) == SALARIES
    # the role name is an identifier, quoted, never spliced into the statement
    assert run(connector, READ_SALES, warehouse.odd) == SALES
    with pytest.raises(PermissionDenied, match="SELECT command denied"):
        run(connector, READ_SALARIES, warehouse.east)
    with pytest.raises(PermissionDenied, match="SELECT command denied"):
        run(connector, READ_SALARIES, warehouse.odd)


def test_the_connection_is_the_login_again_after_each_run(
    connector: SqlConnector, warehouse: RoleWarehouse
) -> None:
    assert run(connector, WHO, warehouse.east) == [(warehouse.east,)]
    assert run(connector, WHO) == [(warehouse.catalog,)]
    with pytest.raises(PermissionDenied):
        run(connector, READ_SALARIES, warehouse.east)
    assert run(connector, WHO) == [(warehouse.catalog,)]
    # the login's own access is its catalog role's: every table
    assert run(connector, READ_SALARIES) == SALARIES


def test_a_stopped_run_leaves_no_role_behind(
    connector: SqlConnector, warehouse: RoleWarehouse
) -> None:
    with pytest.raises(QueryTimeout):
        connector.run(
            "SELECT COUNT(*) FROM sales a, sales b, sales c, sales d, sales e, sales f, "
            "sales g, sales h, sales i, sales j, sales k, sales l, sales m, sales n "
            "WHERE a.amount + b.amount + c.amount + d.amount > SLEEP(0.01)",
            max_rows=1,
            timeout_s=0.3,
            context=RunContext(identity=warehouse.west),
        )
    assert run(connector, WHO) == [(warehouse.catalog,)]


def test_unreadable_asks_the_server_for_the_role(
    connector: SqlConnector, warehouse: RoleWarehouse
) -> None:
    tables = sorted(t.name for t in connector.list_tables())
    sales, salaries = (f"{warehouse.database}.{name}" for name in ("sales", "salaries"))
    assert tables == [salaries, sales]
    assert connector.unreadable(warehouse.west, tables) == []
    assert connector.unreadable(warehouse.east, tables) == [salaries]
    assert connector.unreadable(warehouse.east, [f"{warehouse.database}.nothing"]) == [
        f"{warehouse.database}.nothing"
    ]
    assert run(connector, WHO) == [(warehouse.catalog,)]


@pytest.mark.parametrize("role", ["stranger", "missing"])
def test_a_role_the_login_was_not_granted_is_refused_with_what_to_do(
    connector: SqlConnector, warehouse: RoleWarehouse, role: str
) -> None:
    name = warehouse.stranger if role == "stranger" else "qb_no_such_role"
    with pytest.raises(PermissionDenied) as caught:
        run(connector, READ_SALES, name)
    assert f"may not run queries as the MySQL/MariaDB role {name!r}" in caught.value.message
    assert "GRANT" in caught.value.hint and "run_as" in caught.value.hint
    with pytest.raises(PermissionDenied):
        connector.unreadable(name, [f"{warehouse.database}.sales"])
    assert run(connector, WHO) == [(warehouse.catalog,)]


def test_a_role_granted_writes_after_the_start_is_refused(
    connector: SqlConnector, warehouse: RoleWarehouse
) -> None:
    writer = f"qb_{uuid.uuid4().hex[:8]}_writer"
    warehouse.admin(
        f"CREATE ROLE {quoted(writer)}",
        f"GRANT SELECT, INSERT ON {quoted(warehouse.database)}.sales TO {quoted(writer)}",
        f"GRANT {quoted(writer)} TO '{warehouse.login}'@'%'",
    )
    try:
        with pytest.raises(PermissionDenied, match="INSERT ON") as caught:
            run(connector, READ_SALES, writer)
        assert f"the role {writer!r}" in caught.value.message
        assert f"REVOKE those from {writer}" in caught.value.hint
    finally:
        warehouse.admin(f"DROP ROLE IF EXISTS {quoted(writer)}")


def test_a_login_that_reads_tables_itself_acts_as_no_role(warehouse: RoleWarehouse) -> None:
    """A role's privileges add to the login's own: a login granted SELECT itself would pass it
    to every role it acts as, so it acts as none."""
    login = f"qb_{uuid.uuid4().hex[:8]}_direct"
    database = quoted(warehouse.database)
    warehouse.admin(
        f"CREATE USER '{login}'@'%'",
        f"GRANT SELECT ON {database}.salaries TO '{login}'@'%'",
        f"GRANT {quoted(warehouse.east)} TO '{login}'@'%'",
    )
    connector = SqlConnector(warehouse.url.replace(warehouse.login, login, 1), pool_size=1)
    try:
        with pytest.raises(PermissionDenied) as caught:
            run(connector, READ_SALES, warehouse.east)
        assert f"may itself SELECT on {warehouse.database}.salaries" in caught.value.message
        revoke = f"REVOKE SELECT ON {warehouse.database}.salaries FROM '{login}'@'%'"
        assert revoke in caught.value.hint
        assert run(connector, READ_SALARIES) == SALARIES
    finally:
        connector.close()
        warehouse.admin(f"DROP USER IF EXISTS '{login}'@'%'")


def test_a_login_whose_role_holds_a_role_that_writes_is_refused(warehouse: RoleWarehouse) -> None:
    tag = uuid.uuid4().hex[:8]
    login, outer, inner = f"qb_{tag}_nested", f"qb_{tag}_outer", f"qb_{tag}_inner"
    warehouse.admin(
        f"CREATE USER '{login}'@'%'",
        f"CREATE ROLE {quoted(outer)}",
        f"CREATE ROLE {quoted(inner)}",
        f"GRANT INSERT ON {quoted(warehouse.database)}.sales TO {quoted(inner)}",
        f"GRANT {quoted(inner)} TO {quoted(outer)}",
        f"GRANT {quoted(outer)} TO '{login}'@'%'",
        f"SET DEFAULT ROLE {quoted(outer)} FOR '{login}'@'%'",
    )
    try:
        with pytest.raises(PermissionDenied, match=f"INSERT ON {warehouse.database}.sales"):
            SqlConnector(warehouse.url.replace(warehouse.login, login, 1))
    finally:
        warehouse.admin(
            f"DROP USER IF EXISTS '{login}'@'%'",
            f"DROP ROLE IF EXISTS {quoted(outer)}",
            f"DROP ROLE IF EXISTS {quoted(inner)}",
        )

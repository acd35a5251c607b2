"""`QUERYBOT_WAREHOUSE=snowflake://...`, its settings, key-pair and password logins, and how
driver errors are told to people."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import snowflake.connector
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from snowflake.connector import errors as sf

from bot.config import Warehouse
from bot.doctor.deployment import check_warehouse, render
from connectors import open_connector
from connectors.base import (
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryTimeout,
    WarehouseUnavailable,
)
from connectors.settings import ConnectorSettings, SettingsError, SnowflakeSettings
from connectors.snowflake.connector import SnowflakeConnector
from connectors.snowflake.errors import translate
from connectors.snowflake.session import credentials
from tests.connectors.snowflake.conftest import Seeded
from tests.support.snowflake_recording import Recorder
from tests.support.snowflake_server import FakesnowServer

PASSWORD = ConnectorSettings(snowflake_user="QUERYBOT", snowflake_password="pw")


def opened(spec: str, settings: ConnectorSettings = PASSWORD) -> SnowflakeConnector:
    connector = open_connector(spec, data_dir=Path("."), settings=settings)
    assert isinstance(connector, SnowflakeConnector)
    return connector


def test_the_url_names_account_database_schemas_warehouse_and_role() -> None:
    connector = opened("snowflake://myorg-acct/Analytics/sales,Archive?warehouse=bi_wh&role=reader")
    assert connector.account == "myorg-acct"
    assert connector.scope.database == "ANALYTICS"
    assert connector.scope.schemas == ("SALES", "ARCHIVE")
    assert (connector.warehouse, connector.role) == ("BI_WH", "READER")
    assert (connector.name, connector.dialect) == ("snowflake", "snowflake")


def test_without_schemas_public_is_read_and_the_role_is_optional() -> None:
    connector = opened("snowflake://acct/DB?warehouse=WH")
    assert connector.scope.schemas == ("PUBLIC",) and connector.role is None


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("snowflake:acct/DB?warehouse=WH", "must be snowflake://"),
        ("snowflake://acct?warehouse=WH", "must be snowflake://"),
        ("snowflake://acct/DB/S/extra?warehouse=WH", "must be snowflake://"),
        ("snowflake://acct/DB", "names no warehouse"),
        ("snowflake://acct/DB?warehouse=WH&password=x", "unknown: password"),
        ("snowflake://acct/DB;DROP?warehouse=WH", "not a plain Snowflake identifier"),
        ("snowflake://acct/DB/S?warehouse=W-H", "not a plain Snowflake identifier"),
    ],
)
def test_a_malformed_url_says_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        opened(spec)


def test_the_settings_are_read_from_the_environment() -> None:
    settings = SnowflakeSettings.from_env(
        {"SNOWFLAKE_USER": "QB", "QUERYBOT_SF_MAX_BYTES_SCANNED": "1000", "SNOWFLAKE_PASSWORD": "x"}
    )
    assert (settings.snowflake_user, settings.sf_max_bytes_scanned) == ("QB", 1000)
    with pytest.raises(SettingsError, match="QUERYBOT_SF_MAX_BYTES_SCANNED must be a whole number"):
        SnowflakeSettings.from_env({"QUERYBOT_SF_MAX_BYTES_SCANNED": "0"})
    connector = opened(
        "snowflake://acct/DB?warehouse=WH",
        ConnectorSettings(snowflake_user="QB", snowflake_password="x", sf_max_bytes_scanned=77),
    )
    assert connector.max_bytes_scanned == 77


def write_key(path: Path, passphrase: bytes | None) -> rsa.RSAPrivateKey:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    encryption = (
        serialization.BestAvailableEncryption(passphrase)
        if passphrase
        else serialization.NoEncryption()
    )
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
    )
    return key


def test_key_pair_credentials_from_an_encrypted_key(tmp_path: Path) -> None:
    key = write_key(tmp_path / "rsa_key.p8", b"s3cret")
    made = credentials(
        "QB", private_key_file=str(tmp_path / "rsa_key.p8"), passphrase="s3cret", password="pw"
    )
    assert made.parameters() == {"user": "QB", "private_key": der(key)}  # the key wins
    assert "s3cret" not in repr(made) and "pw" not in repr(made)
    with pytest.raises(WarehouseUnavailable, match="cannot be read"):
        credentials("QB", private_key_file=str(tmp_path / "rsa_key.p8"), passphrase="wrong")
    with pytest.raises(WarehouseUnavailable, match="cannot be read"):
        credentials("QB", private_key_file=str(tmp_path / "missing.p8"))


def test_password_is_the_fallback_and_something_is_required() -> None:
    assert credentials("QB", password="pw").parameters() == {"user": "QB", "password": "pw"}
    with pytest.raises(WarehouseUnavailable, match="No Snowflake credentials") as nothing:
        credentials("QB")
    assert "SNOWFLAKE_PRIVATE_KEY_FILE" in nothing.value.hint
    with pytest.raises(WarehouseUnavailable, match="No Snowflake user") as nobody:
        credentials("", password="pw")
    assert "SNOWFLAKE_USER" in nobody.value.hint


def der(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@pytest.mark.slow
def test_a_key_pair_login_reaches_fakesnow(
    tmp_path: Path,
    seeded: Seeded,
    fakesnow_server: FakesnowServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the connector hands the driver (the key, no password), and that the driver logs in
    with it (key-pair authentication, a token it signs). fakesnow accepts any login, so this
    does not show that Snowflake would accept it."""
    key = write_key(tmp_path / "rsa_key.p8", None)
    # fakesnow's address only: the user and the credentials are the connector's own
    address = {
        k: v for k, v in fakesnow_server.connect_kwargs().items() if k not in ("user", "password")
    }
    recorder = Recorder(server=address)
    driver_logins: list[dict[str, Any]] = []
    sessions: list[Any] = []
    real_connect = snowflake.connector.connect

    def driver(**kwargs: Any) -> Any:
        driver_logins.append(kwargs)
        return real_connect(**kwargs)

    def connect(**kwargs: Any) -> Any:
        sessions.append(recorder.connect(**kwargs))
        return sessions[-1]

    monkeypatch.setattr(snowflake.connector, "connect", driver)
    connector = SnowflakeConnector(
        "myorg-acct",
        database=seeded.database,
        schemas=["SALES"],
        warehouse="WH",
        credentials=credentials("QB", private_key_file=str(tmp_path / "rsa_key.p8")),
        connect=connect,
    )
    try:
        result = connector.run("SELECT COUNT(*) FROM CUSTOMERS", max_rows=1, timeout_s=30)
    finally:
        connector.close()
    assert result.rows == [(2,)]
    assert len(recorder.logins) == len(driver_logins) == 2  # the catalog's session, the run's
    for login in (*recorder.logins, *driver_logins):
        assert login["user"] == "QB" and login["private_key"] == der(key)
        assert "password" not in login
    assert {type(s.real.auth_class).__name__ for s in sessions} == {"AuthByKeyPair"}


@pytest.mark.parametrize(
    ("contents", "passphrase", "words"),
    [
        ("encrypted", "wrong", "Incorrect password"),
        ("encrypted", None, "Password was not given but private key is encrypted"),
        ("plain", "s3cret", "Password was given but private key is not encrypted"),
        ("garbage", None, "Unable to load PEM file"),
        ("public", None, "no BEGIN/END delimiters for a private key"),
        ("missing", None, "No such file or directory"),
    ],
)
def test_a_key_that_cannot_be_read_fails_in_one_line_before_anything_is_sent(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    contents: str,
    passphrase: str | None,
    words: str,
) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    encrypted = serialization.BestAvailableEncryption(b"s3cret")
    pkcs8, pem = serialization.PrivateFormat.PKCS8, serialization.Encoding.PEM
    path = tmp_path / "rsa_key.p8"
    written = {
        "encrypted": key.private_bytes(pem, pkcs8, encrypted),
        "plain": key.private_bytes(pem, pkcs8, serialization.NoEncryption()),
        "garbage": b"-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n",
        "public": key.public_key().public_bytes(
            pem, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    }
    if contents in written:
        path.write_bytes(written[contents])
    sent: list[object] = []
    monkeypatch.setattr(snowflake.connector, "connect", lambda **kwargs: sent.append(kwargs))
    monkeypatch.setattr(SnowflakeConnector, "open_session", lambda *args: sent.append(args))
    settings = ConnectorSettings(
        snowflake_user="QUERYBOT",
        snowflake_private_key_file=str(path),
        snowflake_private_key_passphrase=passphrase,
        snowflake_password="unused",
    )
    spec = "snowflake://myorg-acct/DB?warehouse=WH"
    with pytest.raises(WarehouseUnavailable) as unreadable:
        open_connector(spec, data_dir=Path("."), settings=settings)
    message = unreadable.value.message
    assert message.startswith(f"The Snowflake private key {path} cannot be read: ")
    assert words in message and "\n" not in message
    assert "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE" in unreadable.value.hint
    assert "s3cret" not in message and "unused" not in message
    out = render(
        [
            check_warehouse(
                Warehouse("sf", spec, spec),
                lambda _: open_connector(spec, data_dir=Path("."), settings=settings),
            )
        ]
    )
    [line] = [line for line in out.splitlines() if "cannot be read" in line]
    assert line.startswith(f"  ✗ does not open: The Snowflake private key {path} cannot be read")
    assert sent == []  # no login was tried, on the driver or through the connector


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (sf.ProgrammingError(msg="SQL execution canceled", errno=604), QueryCancelled),
        (
            sf.ProgrammingError(msg="Statement reached its statement timeout", errno=630),
            QueryTimeout,
        ),
        (sf.ProgrammingError(msg="Insufficient privileges", errno=3001), PermissionDenied),
        (
            sf.DatabaseError(msg="Incorrect username or password", errno=390100),
            WarehouseUnavailable,
        ),
        (sf.OperationalError(msg="Could not connect", errno=250001), WarehouseUnavailable),
        (sf.ProgrammingError(msg="Object 'X' does not exist", errno=2003), QueryFailed),
        (sf.ProgrammingError(msg="SQL compilation error", errno=1003), QueryFailed),
        (TimeoutError("q"), QueryTimeout),
    ],
)
def test_driver_errors_become_connector_errors(error: BaseException, kind: type) -> None:
    translated = translate(error, timeout_s=5)
    assert type(translated) is kind
    if kind is QueryFailed:
        assert translated.retryable_by_repair

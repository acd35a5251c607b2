"""`QUERYBOT_WAREHOUSE=snowflake://ACCOUNT/DATABASE[/SCHEMA,...]?warehouse=WH&role=ROLE` and the
settings beside it, as a Snowflake connector."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from connectors.limits import RunLimits
from connectors.settings import SnowflakeSettings
from connectors.snowflake import session
from connectors.snowflake.connector import SnowflakeConnector


def from_spec(
    arg: str, settings: SnowflakeSettings, limits: RunLimits | None = None
) -> SnowflakeConnector:
    """The connector for `snowflake://ACCOUNT/DATABASE[/SCHEMA,...]?warehouse=WH&role=ROLE`
    (the text after `snowflake:`; schema PUBLIC when none is listed) with its settings:
    SNOWFLAKE_USER, SNOWFLAKE_PRIVATE_KEY_FILE and SNOWFLAKE_PRIVATE_KEY_PASSPHRASE (or
    SNOWFLAKE_PASSWORD), QUERYBOT_SF_MAX_BYTES_SCANNED, and SNOWFLAKE_ENDPOINT (a stand-in)."""
    form = "snowflake://ACCOUNT/DATABASE[/SCHEMA,...]?warehouse=WH[&role=ROLE]"
    parts = urlsplit(f"snowflake:{arg}")
    path = [p for p in parts.path.split("/") if p]
    query = parse_qs(parts.query)
    unknown = sorted(set(query) - {"warehouse", "role"})
    if not arg.startswith("//") or not parts.netloc or not 1 <= len(path) <= 2 or unknown:
        extra = f" (unknown: {', '.join(unknown)})" if unknown else ""
        raise ValueError(f"The warehouse 'snowflake:{arg}' must be {form}{extra}.")
    warehouse = query.get("warehouse", [""])[-1]
    if not warehouse:
        raise ValueError(f"The warehouse 'snowflake:{arg}' names no warehouse: {form}.")
    schemas = [s.strip() for s in path[1].split(",") if s.strip()] if len(path) == 2 else []
    return SnowflakeConnector(
        parts.netloc,
        database=path[0],
        schemas=schemas or ["PUBLIC"],
        warehouse=warehouse,
        role=query.get("role", [""])[-1] or None,
        credentials=session.credentials(
            settings.snowflake_user,
            private_key_file=settings.snowflake_private_key_file,
            passphrase=settings.snowflake_private_key_passphrase,
            password=settings.snowflake_password,
        ),
        max_bytes_scanned=settings.sf_max_bytes_scanned,
        endpoint=settings.snowflake_endpoint,
        limits=limits,
    )

"""Settings read from the environment, with pydantic-settings, and what is wrong with a bad one.

`EnvSettings` is the base of every group of settings: the connectors' own here (what one query
may cost, BigQuery, Looker) and the bot's (its `Settings`), which combines them all. Each field
is named by its environment variable (its alias), so a bad value is reported by that name with
what to set instead: "QUERYBOT_ROW_LIMIT must be a whole number from 1 to 100000 (default 1000),
got 'abc'." Every numeric setting has a range.

The connectors depend on nothing above them, so a connector opened without settings
(`open_connector(spec, ...)` in a test or a script) reads its own group from the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self, get_args, get_origin

from annotated_types import Ge, Gt, Le
from pydantic import Field, TypeAdapter, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from connectors.limits import MIB, SETTINGS, UNBOUNDED_TEMP_SETTING, RunLimits

#: What a `bigquery:` job may scan (bytes) unless QUERYBOT_BQ_MAX_BYTES_BILLED says otherwise,
#: and the on-demand price per TiB the estimates are shown in.
BQ_MAX_BYTES_BILLED = 10 * 1024**3
BQ_PRICE_PER_TIB_USD = 6.25
#: What a `snowflake://` query may read (bytes EXPLAIN assigns to its scan) before it is offered
#: for approval, unless QUERYBOT_SF_MAX_BYTES_SCANNED says otherwise.
SF_MAX_BYTES_SCANNED = 10 * 1024**3
#: Sample rows shown to the model per Looker Explore unless LOOKER_SAMPLE_ROWS says otherwise.
LOOKER_SAMPLE_ROWS = 3


class SettingsError(Exception):
    """Settings are missing or wrong; the message names each one and what to set."""


def variable(name: str, default: Any, **constraints: Any) -> Any:
    """A field read from the environment variable `name`, with its range (`ge`, `gt`, `le`);
    `repr=False` keeps a secret out of logs."""
    return Field(default, validation_alias=name, **constraints)


class EnvSettings(BaseSettings):
    """A group of settings, each read from its environment variable. A blank variable is unset.

    Built in code (`Settings(row_limit=5)`, by field name), it takes the values given and
    nothing else, as tests need; `from_env` is where the environment is read.
    """

    model_config = SettingsConfigDict(
        case_sensitive=True, frozen=True, validate_by_name=True, extra="ignore"
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        """The settings `env` gives (the process environment when None, read by
        pydantic-settings). Raises SettingsError with one line per bad variable."""
        variables = EnvSettingsSource(cls)() if env is None else dict(env)
        try:
            return cls(**variables)
        except ValidationError as exc:
            problems = sorted(cls._problem(error) for error in exc.errors())
            if len(problems) == 1:
                raise SettingsError(problems[0]) from None
            lines = "\n".join(f"  {p}" for p in problems)
            raise SettingsError(
                f"Some settings are wrong; fix them in .env or the environment:\n{lines}"
            ) from None

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        stripped = {k: v.strip() if isinstance(v, str) else v for k, v in data.items()}
        return {k: v for k, v in stripped.items() if v != ""}

    @classmethod
    def expected(cls, name: str) -> str:
        """What field `name` takes, in words: `a whole number from 1 to 100000`. A number's
        range is `ge` or `gt` with `le` (every numeric setting has one)."""
        field = cls.model_fields[name]
        if field.annotation is bool:
            return "true or false"
        if get_origin(field.annotation) is Literal:
            return "one of " + ", ".join(get_args(field.annotation))
        number = "a whole number" if field.annotation is int else "a number"
        bound = {
            type(m): getattr(m, _BOUNDS[type(m)]) for m in field.metadata if type(m) in _BOUNDS
        }
        if Ge in bound:
            return f"{number} from {_number(bound[Ge])} to {_number(bound[Le])}"
        return f"{number} above {_number(bound[Gt])}, at most {_number(bound[Le])}"

    @classmethod
    def valid(cls, name: str, value: Any) -> bool:
        """Whether `value`, as a config file gives it (a TOML number), is one field `name`
        takes: its type (strictly: no text, no true for 1) and its range."""
        field = cls.model_fields[name]
        try:
            # a type built at run time from the field: mypy cannot read it as a type form
            TypeAdapter(Annotated[field.annotation, *field.metadata]).validate_python(  # type: ignore[arg-type]
                value, strict=True
            )
        except ValidationError:
            return False
        return True

    @classmethod
    def _problem(cls, error: Any) -> str:
        """One line for one validation error: the variable, what it takes, what it got."""
        variable = str(error["loc"][0]) if error["loc"] else ""
        if error["type"] == "value_error":  # a validator's own words
            text = str(error["ctx"]["error"])
            return text if not variable or text.startswith(variable) else f"{variable}: {text}"
        name = next(
            (n for n, f in cls.model_fields.items() if variable in (n, f.validation_alias)), None
        )
        if name is None:
            return f"{variable}: {error['msg']}"
        default = _default(cls.model_fields[name])
        return f"{variable} must be {cls.expected(name)}{default}, got {error['input']!r}."


#: The range metadata a numeric field carries (annotated_types), and its attribute.
_BOUNDS: dict[type, str] = {Ge: "ge", Gt: "gt", Le: "le"}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _default(field: FieldInfo) -> str:
    default = field.default
    if default is None or isinstance(default, bool):
        return ""
    return f" (default {_number(default) if isinstance(default, int | float) else default})"


class LimitSettings(EnvSettings):
    """What one query may cost (`RunLimits`): QUERYBOT_MAX_CELL_BYTES, QUERYBOT_MAX_RESULT_MB,
    QUERYBOT_ENGINE_MEMORY_MB, QUERYBOT_ENGINE_TEMP_MB, and QUERYBOT_PG_ALLOW_UNBOUNDED_TEMP
    (PostgreSQL without a temp_file_limit)."""

    max_cell_bytes: int = variable(
        SETTINGS["max_cell_bytes"], RunLimits.max_cell_bytes, ge=1, le=1024 * MIB
    )
    max_result_mb: int = variable(
        SETTINGS["max_result_bytes"], RunLimits.max_result_bytes // MIB, ge=1, le=65_536
    )
    engine_memory_mb: int = variable(
        SETTINGS["engine_memory_mb"], RunLimits.engine_memory_mb, ge=1, le=1_048_576
    )
    engine_temp_mb: int = variable(
        SETTINGS["engine_temp_mb"], RunLimits.engine_temp_mb, ge=1, le=1_048_576
    )
    allow_unbounded_temp: bool = variable(UNBOUNDED_TEMP_SETTING, RunLimits.allow_unbounded_temp)

    @property
    def limits(self) -> RunLimits:
        return RunLimits(
            max_cell_bytes=self.max_cell_bytes,
            max_result_bytes=self.max_result_mb * MIB,
            engine_memory_mb=self.engine_memory_mb,
            engine_temp_mb=self.engine_temp_mb,
            allow_unbounded_temp=self.allow_unbounded_temp,
        )


class BigQuerySettings(EnvSettings):
    """What a `bigquery:PROJECT/DATASET` warehouse reads (`BigQueryConnector`)."""

    bigquery_location: str | None = variable("BIGQUERY_LOCATION", None)
    #: A BigQuery-compatible endpoint (a local emulator), used without credentials.
    bigquery_api_endpoint: str | None = variable("BIGQUERY_API_ENDPOINT", None)
    #: A service-account key file; unset: Application Default Credentials.
    google_application_credentials: str | None = variable("GOOGLE_APPLICATION_CREDENTIALS", None)
    bq_max_bytes_billed: int = variable(
        "QUERYBOT_BQ_MAX_BYTES_BILLED", BQ_MAX_BYTES_BILLED, ge=1, le=10**15
    )
    bq_price_per_tib: float = variable(
        "QUERYBOT_BQ_PRICE_PER_TIB", BQ_PRICE_PER_TIB_USD, ge=0, le=1000
    )


class LookerSettings(EnvSettings):
    """What a `looker://HOST` warehouse reads (`LookerConnector`). The API key and the
    jar are required only when such a warehouse is opened, which names the missing ones."""

    looker_client_id: str = variable("LOOKER_CLIENT_ID", "")
    looker_client_secret: str = variable("LOOKER_CLIENT_SECRET", "", repr=False)
    looker_jdbc_jar: str = variable("LOOKER_JDBC_JAR", "")
    #: The driver's URL and class, replaced to point the connector at another JDBC database
    #: standing in for Looker (the tests do).
    looker_jdbc_url: str = variable("LOOKER_JDBC_URL", "")
    looker_jdbc_driver: str = variable("LOOKER_JDBC_DRIVER", "")
    looker_sample_rows: int = variable("LOOKER_SAMPLE_ROWS", LOOKER_SAMPLE_ROWS, ge=0, le=100)


class SnowflakeSettings(EnvSettings):
    """What a `snowflake://ACCOUNT/DATABASE` warehouse reads (`SnowflakeConnector`):
    the user, a key pair (or a password), and the cap on what one query may read."""

    snowflake_user: str = variable("SNOWFLAKE_USER", "")
    #: A PEM private key; its passphrase only when it is encrypted.
    snowflake_private_key_file: str | None = variable("SNOWFLAKE_PRIVATE_KEY_FILE", None)
    snowflake_private_key_passphrase: str | None = variable(
        "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE", None, repr=False
    )
    #: Used only when no key file is set.
    snowflake_password: str | None = variable("SNOWFLAKE_PASSWORD", None, repr=False)
    #: A Snowflake-compatible endpoint, `http://HOST:PORT` (a local stand-in such as fakesnow).
    snowflake_endpoint: str | None = variable("SNOWFLAKE_ENDPOINT", None)
    sf_max_bytes_scanned: int = variable(
        "QUERYBOT_SF_MAX_BYTES_SCANNED", SF_MAX_BYTES_SCANNED, ge=1, le=10**15
    )


class ConnectorSettings(BigQuerySettings, LookerSettings, SnowflakeSettings):
    """What the connectors read from the environment besides their spec (the bot's `Settings` is
    one, so the values checked at start are the ones a warehouse opens with)."""

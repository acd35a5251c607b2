"""How the Snowflake connector logs in and what each of its sessions carries.

Authentication is a key pair (an RSA private key file, its passphrase from the environment), or a
password when no key file is given. Every session is opened with its session parameters in the
login request itself: `STATEMENT_TIMEOUT_IN_SECONDS`, so Snowflake stops a statement the bot has
given up on even if the cancel is lost, and a `QUERY_TAG` naming the app and, for a run, the
proposal, requester and approver, so each query can be found in QUERY_HISTORY (a repeated
approval finds its first run there). Setting them at login, not with `ALTER SESSION`, means no
statement can run in a session that lacks them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization

from connectors.base import WarehouseUnavailable

APP = "querybot"
#: Snowflake's limit on QUERY_TAG, in characters.
MAX_TAG = 2000
#: The tag key that names the approval a run is for; it comes first in the tag, so a run is
#: found by the tag's prefix (`tag_prefix`).
PROPOSAL = "proposal"
_MAX_LABEL = 200


@dataclass(frozen=True)
class Credentials:
    """Who logs in: `user` with a PKCS#8 private key (DER bytes), or with a password."""

    user: str
    private_key: bytes | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    def parameters(self) -> dict[str, Any]:
        if self.private_key is not None:
            return {"user": self.user, "private_key": self.private_key}
        return {"user": self.user, "password": self.password or ""}


def credentials(
    user: str,
    *,
    private_key_file: str | None = None,
    passphrase: str | None = None,
    password: str | None = None,
) -> Credentials:
    """Key-pair credentials when a key file is named, else password ones; a missing user or a
    key that cannot be read (wrong passphrase, not a key) is a WarehouseUnavailable that says
    which setting to fix."""
    if not user:
        raise WarehouseUnavailable(
            "No Snowflake user is set.", hint="Set SNOWFLAKE_USER to the bot's login name."
        )
    if private_key_file:
        return Credentials(user, private_key=load_private_key(private_key_file, passphrase))
    if not password:
        raise WarehouseUnavailable(
            "No Snowflake credentials are set.",
            hint="Set SNOWFLAKE_PRIVATE_KEY_FILE (and SNOWFLAKE_PRIVATE_KEY_PASSPHRASE when the "
            "key is encrypted) for key-pair authentication, or SNOWFLAKE_PASSWORD.",
        )
    return Credentials(user, password=password)


def load_private_key(path: str, passphrase: str | None) -> bytes:
    """The PEM private key at `path` (encrypted with `passphrase`, or not) as PKCS#8 DER bytes,
    the form the driver's `private_key` takes."""
    try:
        pem = Path(path).expanduser().read_bytes()
        key = serialization.load_pem_private_key(
            pem, password=passphrase.encode() if passphrase else None
        )
    except (OSError, ValueError, TypeError) as exc:
        raise WarehouseUnavailable(
            f"The Snowflake private key {path} cannot be read: {exc}",
            hint="Check SNOWFLAKE_PRIVATE_KEY_FILE (a PEM file) and "
            "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE (set only when the key is encrypted).",
            engine_message=str(exc),
        ) from exc
    return key.private_bytes(
        encoding=serialization.Encoding.DER,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    )


def endpoint_parameters(endpoint: str) -> dict[str, Any]:
    """`host`, `port` and `protocol` for a Snowflake-compatible endpoint (a local stand-in such
    as fakesnow's server), from `http://HOST:PORT`."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"SNOWFLAKE_ENDPOINT must be http(s)://HOST[:PORT], got {endpoint!r}.")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {"host": parts.hostname, "port": port, "protocol": parts.scheme}


def query_tag(job_key: str, labels: Mapping[str, str]) -> str:
    """The QUERY_TAG of a run: JSON, the proposal first, then the app and the labels
    (requester, approver, Slack team and channel), within Snowflake's 2,000 characters."""
    tag: dict[str, str] = {PROPOSAL: job_key[:_MAX_LABEL]} if job_key else {}
    tag["app"] = APP
    for key, value in labels.items():
        if key not in tag and key.strip():
            tag[key.strip()[:_MAX_LABEL]] = str(value)[:_MAX_LABEL]
    text = json.dumps(tag, separators=(",", ":"))
    while len(text) > MAX_TAG and len(tag) > 2:
        tag.popitem()
        text = json.dumps(tag, separators=(",", ":"))
    return text


def tag_prefix(job_key: str) -> str:
    """How every tag of the run for `job_key` starts (`query_tag` puts the proposal first)."""
    return json.dumps({PROPOSAL: job_key[:_MAX_LABEL]}, separators=(",", ":"))[:-1]


def session_parameters(tag: str, timeout_s: float) -> dict[str, Any]:
    """The parameters every session of the bot logs in with."""
    return {
        "QUERY_TAG": tag,
        "STATEMENT_TIMEOUT_IN_SECONDS": max(1, math.ceil(timeout_s)),
        # Nothing the bot runs needs an open transaction, and none may be left open.
        "AUTOCOMMIT": True,
        "CLIENT_OUT_OF_BAND_TELEMETRY_ENABLED": False,
    }

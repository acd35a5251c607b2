"""Job ids, labels and links for BigQuery jobs, within BigQuery's naming rules."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from urllib.parse import urlencode

#: Every job the bot starts carries this label, so its jobs are easy to find and to bill.
APP_LABEL = ("app", "querybot")

_JOB_KEY = re.compile(r"[A-Za-z0-9_-]{1,200}")
_LABEL_CHARS = re.compile(r"[^a-z0-9_-]")
_MAX_LABEL = 63
_MAX_LABELS = 64


def job_id(job_key: str) -> str:
    """The job id for an approval: the same key always gives the same id.

    BigQuery allows letters, digits, `_` and `-` (1,024 at most); any other key is hashed
    rather than cleaned, so two different keys can never share an id.
    """
    if _JOB_KEY.fullmatch(job_key):
        return f"querybot_{job_key}"
    return "querybot_sha256_" + hashlib.sha256(job_key.encode()).hexdigest()


def labels(requested: Mapping[str, str]) -> dict[str, str]:
    """`requested` cleaned to BigQuery's label rules, plus the app label.

    Keys and values: at most 63 lowercase letters, digits, `_` or `-`; keys start with a
    letter; at most 64 labels. Slack ids (`U0123ABC`) survive as their lowercase form.
    """
    out = dict([APP_LABEL])
    for key, value in requested.items():
        clean_key = _label_text(key)
        if not clean_key:
            continue
        if not clean_key[0].isalpha():
            clean_key = f"k_{clean_key}"[:_MAX_LABEL]
        if clean_key not in out and len(out) == _MAX_LABELS:
            continue
        out[clean_key] = _label_text(value)
    return out


def job_url(project: str, location: str | None, job: str) -> str | None:
    """The job's page in the Cloud console (None without a location, which the link needs)."""
    if not location:
        return None
    query = urlencode({"project": project, "j": f"bq:{location}:{job}", "page": "queryresults"})
    return f"https://console.cloud.google.com/bigquery?{query.replace('%3A', ':')}"


def _label_text(text: str) -> str:
    return _LABEL_CHARS.sub("_", text.strip().lower())[:_MAX_LABEL]

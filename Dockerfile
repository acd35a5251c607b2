# querybot: `querybot run` (Socket Mode, or HTTP with --http), `querybot eval`, `querybot doctor`.
# docker-compose.yml builds and runs it; tests/test_container.py checks this file and runs
# the commands from the files it copies.
#
# The base image is pinned by tag, not by digest: no digest could be verified without a registry.
# To pin one, `docker buildx imagetools inspect python:3.11.13-slim-bookworm` and append
# @sha256:... to the tag below.
FROM python:3.11.13-slim-bookworm

# uv pinned: the version this checkout's .venv was synced with (pyvenv.cfg).
ENV PYTHONUNBUFFERED=1 UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_NO_CACHE=1 \
    UV_PYTHON_DOWNLOADS=never
RUN pip install --no-cache-dir uv==0.13.9
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY agent ./agent
COPY bot ./bot
COPY connectors ./connectors
# Bytecode for querybot's own modules too: the user below cannot write __pycache__ in /app.
RUN uv sync --frozen --no-dev && .venv/bin/python -m compileall -q agent bot connectors
# Golden sets: `querybot eval evals/demo.yaml`.
COPY evals ./evals

# A user that owns only the data directory; everything else in /app stays root's, read-only.
RUN groupadd --gid 10001 querybot \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /app/data \
        --shell /usr/sbin/nologin querybot \
    && mkdir /app/data && chown 10001:10001 /app/data
# Thread state, the bot's store, the audit log, the demo warehouse (and matplotlib's cache, in
# HOME): mount a volume here to keep them. Set HOME only now, so no build step writes into it.
ENV QUERYBOT_DATA_DIR=/app/data HOME=/app/data
USER 10001:10001
VOLUME ["/app/data"]
EXPOSE 3000
# The installed script, not `uv run`: uv would check (and try to sync) the root-owned .venv.
ENTRYPOINT ["/app/.venv/bin/querybot"]
CMD ["run"]

FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy
RUN pip install --no-cache-dir uv
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY agent ./agent
COPY bot ./bot
COPY connectors ./connectors
RUN uv sync --frozen --no-dev

# Thread state, the bot's store and the demo warehouse; mount a volume to keep them.
ENV QUERYBOT_DATA_DIR=/app/data
VOLUME ["/app/data"]
EXPOSE 3000
ENTRYPOINT ["uv", "run", "--no-dev", "querybot"]
CMD ["run"]

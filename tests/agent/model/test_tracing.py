"""LangSmith tracing is switched on by its own environment variables alone, and each model
call's run carries the node's name and the thread id (sent to a local stand-in for LangSmith)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

#: LangSmith's /info answer (its batch settings must all be there, or the client waits forever).
INFO = {
    "version": "0.1",
    "batch_ingest_config": {
        "use_multipart_endpoint": True,
        "scale_up_qsize_trigger": 1000,
        "scale_up_nthreads_limit": 16,
        "scale_down_nempty_trigger": 4,
        "size_limit": 100,
        "size_limit_bytes": 20971520,
    },
}

CHILD = """
import json, sys
from langchain_core.tracers.langchain import wait_for_all_tracers
from langgraph.checkpoint.memory import InMemorySaver
from agent.context import AgentDeps
from agent.conversation import Agent
from agent.model.providers import ScriptedChatModel
from connectors.duckdb.connector import DuckDBConnector

reply = {"kind": "sql", "explanation": "Regions.", "sql": "SELECT region FROM sales"}
connector = DuckDBConnector(sys.argv[1])
agent = Agent(
    AgentDeps(connector=connector, model=ScriptedChatModel(replies=[json.dumps(reply)])),
    InMemorySaver(),
)
print(agent.ask("thread-traced", "Which regions?", user="U1").kind)
wait_for_all_tracers()
connector.close()
"""


class LangSmith(BaseHTTPRequestHandler):
    """Answers LangSmith's info request and records the runs posted to it."""

    posted: list[bytes]

    def _reply(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._reply(json.dumps(INFO).encode())

    def do_POST(self) -> None:
        self.posted.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self._reply(b"{}")

    do_PATCH = do_POST

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def langsmith() -> Iterator[tuple[str, list[bytes]]]:
    posted: list[bytes] = []
    handler = type("Handler", (LangSmith,), {"posted": posted})
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", posted
    server.shutdown()
    server.server_close()


def test_langsmith_env_vars_trace_model_calls_with_node_and_thread(
    langsmith: tuple[str, list[bytes]], shop_path: Path
) -> None:
    endpoint, posted = langsmith
    env = {
        **os.environ,
        "LANGSMITH_TRACING": "true",
        "LANGSMITH_API_KEY": "lsv2-test",
        "LANGSMITH_ENDPOINT": endpoint,
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(shop_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.strip().endswith("proposal"), done.stderr[-2000:]
    sent = b"".join(posted)
    assert b"querybot.generate" in sent
    assert b"node:generate" in sent and b"thread-traced" in sent

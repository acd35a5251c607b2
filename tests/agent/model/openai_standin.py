"""A local stand-in for an OpenAI-compatible chat server, as llama.cpp's (llama-cpp-python's)
serves one: `POST /v1/chat/completions`, answered with the queued replies in order, each as a
forced tool call (the way such a server answers `tool_choice` with a grammar) or an HTTP error.
Like that server, it refuses `response_format: json_schema` with HTTP 500, so a client that asks
for structured output that way fails here as it does there. Every request body is kept."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: llama-cpp-python's answer to `response_format: {"type": "json_schema", ...}`.
JSON_SCHEMA_REFUSAL = {
    "error": {
        "message": "response_format.type: Input should be 'text' or 'json_object'",
        "type": "internal_server_error",
    }
}


class OpenAIStandin:
    """Answers chat completions with queued (status, arguments-or-error) replies."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, str]] = []
        self.bodies: list[dict[str, Any]] = []
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                standin.bodies.append(body)
                self._send(*standin.answer_for(body))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def requests(self) -> int:
        return len(self.bodies)

    def answer(self, arguments: str) -> None:
        """Queue a reply whose forced tool call carries `arguments` (JSON text)."""
        self.replies.append((200, arguments))

    def fail(self, status: int, message: str) -> None:
        self.replies.append((status, message))

    def answer_for(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        response_format = body.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            return 500, JSON_SCHEMA_REFUSAL
        status, text = self.replies.pop(0)
        if status != 200:
            return status, {"error": {"message": text, "type": "server_error"}}
        tools = body.get("tools") or [{"function": {"name": "reply"}}]
        call = {
            "id": f"call_{self.requests}",
            "type": "function",
            "function": {"name": tools[0]["function"]["name"], "arguments": text},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return 200, {
            "id": f"chatcmpl-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "standin"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

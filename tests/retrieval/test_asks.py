"""``load_tools`` queries in the shapes models write, over real MCP servers' tool lists.

The catalog is what ``mcp-server-git``, ``mcp-server-time``, the filesystem and fetch servers
list (``bench/data/mcp/servers``, dumped from the running servers), each server a bundle, as
the gateway registers them.
"""

from __future__ import annotations

import pytest
from mcp_catalog import servers_catalog

from tooltray.memory.config import Settings
from tooltray.memory.retrieval.asks import read_ask
from tooltray.memory.retrieval.selector import build_selector, lexical_selector
from tooltray.memory.tuning import SERVER_K
from tooltray.tools.spec import ToolSpec


def catalog() -> list[ToolSpec]:
    return servers_catalog("git", "time", "filesystem", "fetch")


SPECS = catalog()
NAMES = [s.name for s in SPECS]
BUNDLE_OF = {s.name: s.bundle for s in SPECS}


@pytest.mark.parametrize(
    ("query", "bundles", "text"),
    [
        ("server: Git\ntool: show the commit history", ("git",), "show the commit history"),
        (
            "Server: the filesystem MCP server\nTool: list a folder",
            ("filesystem",),
            "list a folder",
        ),
        ("server: git tool: recent commits", ("git",), "recent commits"),
        ("server: weather service\ntool: forecast", (), "weather service forecast"),
        ("show me the last commits", (), "show me the last commits"),
        ("Plan:\nAction: look up the weather", (), "Plan:\nAction: look up the weather"),
    ],
)
def test_server_lines_name_bundles_and_other_text_stays(
    query: str, bundles: tuple[str, ...], text: str
) -> None:
    ask = read_ask(query, NAMES, BUNDLE_OF)
    assert (ask.bundles, ask.text, ask.named) == (bundles, text, ())


@pytest.mark.parametrize(
    ("guess", "first"),
    [
        ("git_log", "git_log"),
        ("gitLog", "git_log"),
        ("filesystem__read_text_file", "read_text_file"),
        ("list_directories", "list_directory"),
        ("getCurrentTime", "get_current_time"),
    ],
)
def test_a_guessed_name_spells_the_real_one(guess: str, first: str) -> None:
    ask = read_ask(guess, NAMES, BUNDLE_OF)
    assert ask.named[0] == first
    assert ask.bundles == () and "_" not in ask.text


def test_a_guess_near_no_tool_names_none() -> None:
    assert read_ask("get_stock_price", NAMES, BUNDLE_OF).named == ()


def test_search_ranks_within_the_named_server_and_puts_a_spelled_name_first() -> None:
    selector = lexical_selector(SPECS, Settings(db="sqlite://"))
    answer = selector.search("server: filesystem\ntool: read a file")
    found = [c.name for c in answer if not c.mention]
    assert 1 < len(found) <= SERVER_K and all(BUNDLE_OF[n] == "filesystem" for n in found)
    assert found[0] in ("read_file", "read_text_file")
    loaded = {n for n in NAMES if BUNDLE_OF[n] == "filesystem"}
    rest = [c.name for c in selector.search("server: filesystem\ntool: read a file", loaded)]
    rest = [n for n in rest if n in BUNDLE_OF]  # the bundles line of the whole catalog's answer
    assert rest and not set(rest) & loaded  # the bundle all loaded: the whole catalog answers
    named = [c.name for c in selector.search("gitShow") if not c.mention]
    assert named[0] == "git_show" and len(named) == len(set(named))


def test_a_named_server_with_tools_past_the_answer_is_mentioned_by_name() -> None:
    """A server line's answer holds ``SERVER_K`` of the server's tools; where the server has
    more, its bundle is on the answer's bundles line, so a model whose tool is not among them
    loads the rest by name instead of asking for every tool's directory."""
    selector = lexical_selector(SPECS, Settings(db="sqlite://"))
    size = sum(b == "filesystem" for b in BUNDLE_OF.values())
    assert size > SERVER_K  # the premise: more tools than one answer holds
    answer = selector.search("server: filesystem\ntool: read a file")
    assert [c.name for c in answer if c.mention] == ["filesystem"]
    shown = [c.name for c in answer if not c.mention]
    almost = {n for n in NAMES if BUNDLE_OF[n] == "filesystem"} - set(shown[:1])
    last = selector.search("server: filesystem\ntool: read a file", almost - set(shown[1:2]))
    assert not [c for c in last if c.mention]  # every member left fits: nothing to mention
    small = selector.search("server: time\ntool: convert a time")  # two tools: both shown
    assert small and not [c for c in small if c.mention]


@pytest.mark.parametrize(
    ("query", "text", "purpose"),
    [
        ("run python code to read a pdf", "run python code", "read a pdf"),
        ("Execute code to parse a .docx table", "Execute code", "parse a .docx table"),
        (
            "server: code runner\ntool: run code to count words",
            "code runner run code",
            "count words",
        ),
        ("convert coordinates to an address", "convert coordinates to an address", ""),
        ("save the answer to a markdown file", "save the answer to a markdown file", ""),
        ("I want to read the notes", "I want to read the notes", ""),
    ],
)
def test_an_order_with_a_purpose_is_read_apart(query: str, text: str, purpose: str) -> None:
    """An order opening with a verb and followed by ``to <verb> ...`` ranks by the order; a
    ``to`` before a noun, or a text opening with no verb, stays whole."""
    ask = read_ask(query, NAMES, BUNDLE_OF)
    assert (ask.text, ask.purpose) == (text, purpose)


def test_a_server_line_naming_no_bundle_is_a_kind_and_a_named_one_is_not() -> None:
    kind = read_ask("server: version control\ntool: show the log", NAMES, BUNDLE_OF)
    assert (kind.bundles, kind.kind) == ((), "version control")
    named = read_ask("server: git\ntool: show the log", NAMES, BUNDLE_OF)
    assert (named.bundles, named.kind) == (("git",), "")


def test_an_order_to_run_code_finds_the_runner_not_the_purposes_tools() -> None:
    """``execute python code to read an excel file`` asks for the code runner: ranked as one
    text by the real MiniLM and BM25, the purpose's words put the spreadsheet tools first
    (stop 50: 22 of the 37 misses of a model's own searches on mcp70 were code-runner orders)."""
    specs = servers_catalog("mcp-server-code-runner", "excel", "pdf-reader", "paper_search_server")
    selector = build_selector(specs, Settings(db="sqlite://", embed_catalog="wait"), None)
    query = "execute python code to read an excel file"
    found = [c.name for c in selector.search(query) if not c.mention]
    assert found[0] == "run-code"
    whole = [c.name for c in selector.search(query.replace(" to ", " that will "))]
    assert whole[0].startswith("excel_")  # the premise: the purpose's words outrank the order


def test_a_server_kind_ranks_its_servers_tools_first() -> None:
    """The ``<tool_assistant>`` shape frontier models write for a tool-search tool (a kind of
    server, then a long job): ranked as one text by the real MiniLM and BM25, the job's words
    put a scraper first; read apart, the kind's server (the code runner) comes first."""
    servers = ("mcp-server-code-runner", "google-workspace-dguido", "firecrawl", "ddg-search")
    specs = servers_catalog(*servers, "paper_search_server", "sqlite", "excel")
    selector = build_selector(specs, Settings(db="sqlite://", embed_catalog="wait"), None)
    query = (
        "<tool_assistant>\nserver: code execution sandbox (run Python code)\ntool: execute a "
        "Python script that opens a local Word .docx file and extracts its text, returning "
        "stdout\n</tool_assistant>"
    )
    assert [c.name for c in selector.search(query) if not c.mention][0] == "run-code"
    whole = selector.search(query.replace("server:", "about:"))
    assert whole[0].name != "run-code"  # the premise: one text ranks another tool first


def test_a_tool_is_found_by_the_values_its_parameters_take() -> None:
    """``run-code`` says only "Run code snippet and return the result"; its ``languageId`` lists
    ``python``. Among real linters of Python code (``analyzer``), a shell and spreadsheet
    tools, the real MiniLM and BM25 rank it higher for ``execute python code`` with its choices
    read than without (stop 51: model-written searches on mcp300)."""
    servers = ("mcp-server-code-runner", "analyzer", "commands", "excel", "fetch", "time", "git")
    specs = servers_catalog(*servers, "pdf-reader", "paper_search_server")
    settings = Settings(db="sqlite://", embed_catalog="wait")

    def rank(catalog: list[ToolSpec]) -> int:
        index = build_selector(catalog, settings, None).index
        return [h.name for h in index.search("execute python code", 20)].index("run-code")

    bare = [_without_choices(s) if s.name == "run-code" else s for s in specs]
    assert rank(specs) < rank(bare)


def _without_choices(spec: ToolSpec) -> ToolSpec:
    props = {k: {**v, "enum": None} for k, v in spec.parameters["properties"].items()}
    return spec.model_copy(update={"parameters": {**spec.parameters, "properties": props}})

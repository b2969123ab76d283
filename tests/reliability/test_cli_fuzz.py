"""Every CLI command, and ``mcp serve`` start-up, under generated bad input (Hypothesis).

The commands are the leaves of the click group, which lists ``memory/cli/main.py``'s
``COMMANDS``, so a command added there is driven the day it is added. Each case is a command
line, an environment and a config file holding at least one fault that command must refuse:

* arguments: an unknown option, a value its type refuses, an extra argument, a missing one;
* the store: ``--db`` (or ``TOOLTRAY_DB``, or ``db`` in the TOML file) naming a name too long
  for the file system, a missing folder, a folder, a text file or an unknown URL scheme;
* settings (for the commands that read them): a bad value or an unknown ``TOOLTRAY_*`` variable,
  a TOML file with an unknown key, a bad value or broken syntax;
* a catalog (for the commands that read one) that is not UTF-8, not JSON or empty.

Each run must end with exactly one line on stderr, a non-zero exit and no traceback, and leave
the real store (at head, one session) byte-identical and the folder without a new file (SQLite's
``-wal``/``-shm`` beside the store aside). Cases run in-process (click's runner): the default,
:data:`CI_EXAMPLES` a command, keeps this file a small part of the suite (1,000 a command was a
quarter of it); ``--full`` (or ``TOOLTRAY_FULL=1``) runs :data:`FULL_EXAMPLES` a command.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args, get_origin

import click
import pytest
import reliability_support as rs
from cli_tree import command_of, leaves
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from tooltray.memory.cli.main import cli
from tooltray.memory.config import Settings
from tooltray.memory.config_check import OTHER_ENV

FULL_EXAMPLES = 10_000
CI_EXAMPLES = 100  # fresh random cases every run (no example database), so CI runs add up
EXAMPLES = FULL_EXAMPLES if rs.SIZES is not None and rs.SIZES.full else CI_EXAMPLES
RUNS = settings(
    max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
# The commands that build Settings(), and the settings each passes itself (an argument outranks
# the environment and the file, so a bad value there is never read).
SETTINGS_COMMANDS = {"demo": {"skills_dir"}, "chat": {"path"}, "mcp serve": set[str]()}
EXPLICIT_DB = {"catalog lint"}  # --db is an optional cache: TOOLTRAY_DB and the TOML do not apply
TIMES: dict[str, float] = {}
TYPED = (click.Choice, click.IntRange, click.FloatRange, click.DateTime)
GOOD = {  # a value for each required parameter, so a case reaches the fault it was given
    "base_url": "http://127.0.0.1:9/v1",
    "model": "m",
    "before": "2020-01-01",
    "session": "s1",
    "query": "SELECT 1",
}


ALL = sorted(leaves(cli))
safe_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
)


def refused(param: click.Parameter) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            param.type.convert(value, param, None)
        except click.BadParameter:
            return True
        return False

    return check


class World:
    """The real store, the folder and the files the cases point at (made once per command)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = root / "store" / "tooltray.db"
        self.store.parent.mkdir()
        from tooltray.memory.store import Changes, HistoryEvent, Store

        with Store(f"sqlite:///{self.store}") as store:
            events = [HistoryEvent("s1", 1, "selected", detail="selected")]
            store.apply("s1", Changes(turn=1, events=events, only_new=True))
        self.digest = hashlib.sha256(self.store.read_bytes()).hexdigest()
        self.servers = root / "servers.json"
        self.servers.write_text(json.dumps({"mcpServers": {"t": {"command": "true"}}}))
        (root / "text.db").write_text("not a database\n" * 100)
        (root / "a-folder.db").mkdir()
        self.files = self.listing()

    def listing(self) -> set[str]:
        """The files here, but SQLite's own -wal and -shm (a reader of a WAL store makes them)."""
        found = {str(p.relative_to(self.root)) for p in self.root.rglob("*")}
        return {f for f in found if not f.endswith(("-wal", "-shm"))}

    def bad_db(self) -> st.SearchStrategy[str]:
        return st.one_of(
            st.integers(256, 400).map(lambda n: str(self.root / ("d" * n))),
            safe_text.map(lambda t: str(self.root / "no-such-folder" / f"x{abs(hash(t))}.db")),
            st.just(str(self.root / "text.db")),
            st.just(str(self.root / "a-folder.db")),
            st.sampled_from(["nosuch://x", "mysql://u@h/db", "sqlite:////proc/no/such/x.db"]),
        )


def setting_faults(passed: set[str]) -> st.SearchStrategy[tuple[dict[str, str], str | None]]:
    """(environment, TOML text) holding one bad setting (not one the command ``passed``)."""
    fields = Settings.model_fields
    typed = sorted(
        n
        for n, f in fields.items()
        if f.annotation not in (str, str | None, Path | None) and n not in passed
    )

    def bad_value(name: str) -> st.SearchStrategy[str]:
        info = fields[name]
        adapter = TypeAdapter(info.annotation)  # constraints (ge, le) come from metadata
        lows = [
            m for m in info.metadata if hasattr(m, "ge") or hasattr(m, "le") or hasattr(m, "gt")
        ]

        def invalid(value: str) -> bool:
            if get_origin(info.annotation) is list or list in get_args(info.annotation):
                try:
                    json.loads(value)
                except ValueError:
                    return True
                return not isinstance(json.loads(value), list)
            try:
                got = adapter.validate_python(value)
            except ValidationError:
                return True
            return any(not _meets(got, m) for m in lows)

        words = st.sampled_from(["abc", "lots", "-5", "1e999", "maybe", "[", "{}", "999999"])
        return st.one_of(words, safe_text.filter(lambda t: t.strip() != "")).filter(invalid)

    env_value = st.sampled_from(typed).flatmap(
        lambda n: bad_value(n).map(lambda v: ({f"TOOLTRAY_{n.upper()}": v}, None))
    )
    env_unknown = st.from_regex(r"[A-Z][A-Z_]{0,12}[A-Z]", fullmatch=True).map(
        lambda s: f"TOOLTRAY_{s}"
    )
    known = {f"TOOLTRAY_{n.upper()}" for n in fields} | OTHER_ENV
    unknown_env = env_unknown.filter(lambda v: v not in known and not v.startswith("TOOLTRAY_REL"))
    toml_key = st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True).filter(lambda k: k not in fields)
    toml_value = st.sampled_from(typed).flatmap(
        lambda n: bad_value(n).map(lambda v: ({}, f"[tooltray]\n{n} = {json.dumps(v)}\n"))
    )
    return st.one_of(
        env_value,
        unknown_env.map(lambda v: ({v: "1"}, None)),
        toml_key.map(lambda k: ({}, f"[tooltray]\n{k} = 1\n")),
        toml_value,
        st.sampled_from(["[tooltray\n", "a = = 1\n", "x = 'unterminated\n"]).map(lambda t: ({}, t)),
    )


def _meets(value: Any, rule: Any) -> bool:
    for name, test in (("ge", float.__ge__), ("le", float.__le__), ("gt", float.__gt__)):
        bound = getattr(rule, name, None)
        if bound is not None and not test(float(value), float(bound)):
            return False
    return True


@st.composite
def bad_case(draw: st.DrawFn, path: tuple[str, ...], world: World) -> dict[str, Any]:
    """One command line, environment and TOML text with at least one fault."""
    command = command_of(path)
    params = {str(p.name): p for p in command.params}
    kinds = ["unknown option", "extra argument"]
    kinds += ["bad value"] if any(_typed(p) for p in params.values()) else []
    kinds += ["missing"] if any(p.required for p in params.values()) else []
    kinds += ["db"] if "db" in params else []
    kinds += ["env db", "toml db"] if "db" in params and " ".join(path) not in EXPLICIT_DB else []
    kinds += ["settings"] if " ".join(path) in SETTINGS_COMMANDS else []
    # catalog lint reports a broken catalog as findings, its output: not an error
    kinds += ["catalog"] if "catalog" in params and path != ("catalog", "lint") else []
    faults = draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=3, unique=True))
    if "missing" in faults and "extra argument" in faults:
        # the extra word would fill the missing slot: for a free-text argument (explain's
        # MESSAGE) that is a valid command line, not a fault
        faults.remove("extra argument")
    args, env, toml = _base(params, world, faults, draw)
    for fault in faults:
        _apply(fault, params, world, draw, args, env)
        if fault == "settings":
            extra_env, toml_text = draw(setting_faults(SETTINGS_COMMANDS[" ".join(path)]))
            env.update(extra_env)
            toml = toml_text or toml
        if fault == "toml db":
            toml = draw(
                st.one_of(
                    world.bad_db().map(lambda d: f"[tooltray]\ndb = {json.dumps(d)}\n"),
                    st.just("[tooltray]\ndb = 5\n"),
                    st.just("[tooltray\n"),
                )
            )
    return {"args": [*path, *args], "env": env, "toml": toml, "faults": faults}


def _typed(param: click.Parameter) -> bool:
    kind = param.type
    return isinstance(kind, TYPED) or (isinstance(kind, click.Path) and bool(kind.exists))


def _base(
    params: dict[str, click.Parameter], world: World, faults: list[str], draw: st.DrawFn
) -> tuple[list[str], dict[str, str | None], str | None]:
    args: list[str] = []
    missing = (
        draw(st.sampled_from(sorted(n for n, p in params.items() if p.required)))
        if ("missing" in faults)
        else None
    )
    for name, param in params.items():
        if not param.required or name == missing:
            continue
        value = str(world.servers) if name == "config_path" else GOOD.get(name, "x")
        args += [value] if isinstance(param, click.Argument) else [param.opts[0], value]
    if "db" in params and not {"env db", "toml db"} & set(faults):
        args += ["--db", str(world.store)]
    env: dict[str, str | None] = {"TOOLTRAY_DB": None, "TOOLTRAY_CONFIG": None}
    env |= {"TOOLTRAY_SQL_URL": None}
    return args, env, None


def _apply(
    fault: str,
    params: dict[str, click.Parameter],
    world: World,
    draw: st.DrawFn,
    args: list[str],
    env: dict[str, str | None],
) -> None:
    if fault == "unknown option":
        taken = {o for p in params.values() for o in p.opts} | {"--help"}
        name = draw(st.from_regex(r"--[a-z][a-z-]{0,14}[a-z]", fullmatch=True))
        args.insert(draw(st.integers(0, len(args))), "--x-" + name[2:] if name in taken else name)
    elif fault == "extra argument":
        args.append("extra-" + draw(safe_text.filter(lambda t: not t.startswith("-"))))
    elif fault == "bad value":
        param = draw(st.sampled_from([p for p in params.values() if _typed(p)]))
        value = draw(safe_text.filter(refused(param)))
        args.append(f"{param.opts[0]}={value}")
    elif fault == "db":
        args += ["--db", draw(world.bad_db())]
    elif fault == "env db":
        env["TOOLTRAY_DB"] = draw(world.bad_db())
    elif fault == "catalog":
        content = draw(
            st.sampled_from([b"\n", b'{"name": "caf\xe9"}\n\xff\xfe', b"{not json\n", b"[1, 2]\n"])
        )
        catalog = world.root / f"catalog-{hashlib.sha1(content).hexdigest()[:8]}.jsonl"
        if not catalog.exists():
            catalog.write_bytes(content)
            world.files.add(catalog.name)
        args += ["--catalog", str(catalog)]


@pytest.mark.parametrize("path", ALL, ids=[" ".join(p) for p in ALL])
def test_bad_input_is_one_line_and_leaves_the_store_alone(
    path: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = World(tmp_path)
    monkeypatch.chdir(tmp_path)
    for var in [v for v in os.environ if v.upper().startswith("TOOLTRAY_")]:
        if var.upper() not in OTHER_ENV or var.upper() == "TOOLTRAY_CONFIG":
            monkeypatch.delenv(var)
    runner = CliRunner()
    config = tmp_path / "case.toml"
    started = time.perf_counter()

    @RUNS
    @given(bad_case(path, world))
    def check(case: dict[str, Any]) -> None:
        env = dict(case["env"])
        if case["toml"] is not None:
            config.write_text(case["toml"], encoding="utf-8")
            env["TOOLTRAY_CONFIG"] = str(config)
        result = runner.invoke(cli, case["args"], env=env)
        shown = f"{case}\nexit {result.exit_code}\n{result.output}"
        assert result.exit_code != 0, shown
        assert "Traceback" not in result.output, shown
        assert result.exception is None or isinstance(result.exception, SystemExit), shown
        assert len([line for line in result.stderr.splitlines() if line.strip()]) == 1, shown
        assert hashlib.sha256(world.store.read_bytes()).hexdigest() == world.digest, shown
        assert world.listing() - {"case.toml"} <= world.files, shown

    check()
    TIMES[" ".join(path)] = time.perf_counter() - started
    print(f"\n{' '.join(path)}: {EXAMPLES} cases in {TIMES[' '.join(path)]:.1f} s")

"""The machine's vector file: shared by every command and store, so a catalog is embedded once."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.memory.embedders import MiniLMOnnxEmbedder, clear_memo
from tooltray.memory.embedders.filecache import ENV, SharedCache, VectorFile, default_cache_path
from tooltray.memory.store import Store

ROWS = [
    {"name": "PDF&Merge", "description": "Merge PDF files into one.", "group": "Docs Kit"},
    {
        "name": "antd_button",
        "description": "Render an Ant Design button.",
        "group": "Ant Design Components",
    },  # noqa: E501
    {
        "name": "antd_table",
        "description": "Render an Ant Design data table.",
        "group": "Ant Design Components",
    },  # noqa: E501
    {"name": "weather_now", "description": "Current weather for a city.", "group": "weather"},
]


def test_the_file_is_shared_under_any_store(tmp_path: Path) -> None:
    file = VectorFile(tmp_path / "cache" / "vectors.sqlite")
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    vec = np.arange(4, dtype=np.float32)
    SharedCache(store, file).put_embeddings("e", {"h1": vec})
    assert np.array_equal(store.get_embeddings("e", ["h1"])["h1"], vec)
    other = Store(f"sqlite:///{tmp_path / 'b.db'}")  # a second store finds it in the file
    found = SharedCache(other, file).get_embeddings("e", ["h1", "h2"])
    assert list(found) == ["h1"] and np.array_equal(found["h1"], vec)
    assert "h1" in other.get_embeddings("e", ["h1"])  # and keeps a copy


def test_the_location_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV, str(tmp_path / "v.sqlite"))
    assert default_cache_path() == tmp_path / "v.sqlite"
    monkeypatch.setenv(ENV, "off")
    assert default_cache_path() is None
    monkeypatch.delenv(ENV)
    path = default_cache_path()
    assert path is not None and path.name == "vectors.sqlite" and "tooltray" in str(path)


def test_an_unusable_file_is_a_miss_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    file = VectorFile(tmp_path / "dir")  # a folder, not a file
    file.put_embeddings("e", {"h": np.ones(3, np.float32)})
    assert file.get_embeddings("e", ["h"]) == {}


def test_explain_embeds_a_catalog_once_and_shows_bundles_as_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    catalog = tmp_path / "tools.jsonl"
    catalog.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    Store(url).close()
    monkeypatch.setenv(ENV, str(tmp_path / "vectors.sqlite"))
    documents: list[int] = []
    real = MiniLMOnnxEmbedder.embed

    def counted(self: Any, texts: Any, kind: Any = "document") -> Any:
        if kind == "document":
            documents.append(len(texts))
        return real(self, texts, kind)

    monkeypatch.setattr(MiniLMOnnxEmbedder, "embed", counted)
    args = ["explain", "show me an Ant Design table", "--catalog", str(catalog), "--db", url]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code != 0 and "--sanitize" in refused.output

    clear_memo()
    first = CliRunner().invoke(cli, [*args, "--sanitize", "--format", "json"])
    assert first.exit_code == 0, first.output
    assert sum(documents) == len(ROWS)
    with closing(sqlite3.connect(tmp_path / "vectors.sqlite")) as conn:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(ROWS)
    rows = json.loads(first.output)
    assert "Ant Design Components" in {r["bundle"] for r in rows}

    clear_memo()  # a new process: the vectors come from the file, none is computed
    again = CliRunner().invoke(cli, [*args, "--sanitize", "--format", "json"])
    assert again.exit_code == 0, again.output
    assert sum(documents) == len(ROWS)

"""Skills: procedures distilled from successful runs, each naming the exact tools it needs.

A folder of ``<skill>/SKILL.md`` files with YAML frontmatter (``name``, ``description``,
``tools_required``). ``recall_skill(goal)`` finds matching skills by embedding; a match's tools are
loaded ahead of the retrieval picks. High precision, low recall: it complements retrieval. No
folder means no skills, and behaviour identical to a build without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from tooltray.memory.embedders.base import Embedder
from tooltray.tools.errors import ConfigError


@dataclass(frozen=True)
class Skill:
    """One SKILL.md: what it achieves and which tools its recipe calls."""

    name: str
    description: str
    tools_required: tuple[str, ...]
    path: Path


def parse_skill(path: Path) -> Skill:
    """Parse one SKILL.md; a malformed file raises ConfigError naming the file and the field."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        raise ConfigError(
            f"{path}: a SKILL.md must start with YAML frontmatter between '---' lines."
        )
    try:
        _, front, _body = text.split("---", 2)
        data = yaml.safe_load(front) or {}
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: unreadable frontmatter ({exc}); fix the YAML.") from None
    tools = data.get("tools_required") or []
    if not isinstance(data.get("name"), str) or not isinstance(tools, list):
        raise ConfigError(f"{path}: frontmatter needs `name` (text) and `tools_required` (a list).")
    return Skill(data["name"], str(data.get("description", "")), tuple(map(str, tools)), path)


def load_skills(folder: Path | None) -> list[Skill]:
    """Every ``*/SKILL.md`` (or ``*.md`` with frontmatter) under ``folder``, sorted by name."""
    if folder is None:
        return []
    if not folder.is_dir():
        raise ConfigError(f"skills_dir {str(folder)!r} is not a folder: create it or unset it.")
    files = sorted(folder.glob("*/SKILL.md")) or sorted(folder.glob("*.md"))
    return sorted((parse_skill(f) for f in files), key=lambda s: s.name)


class SkillLibrary:
    """Skills with their embeddings, matched against a goal with a catalog-calibrated bar.

    A skill matches when its cosine with the goal is at least the ``percentile`` of the goal's
    cosines with the tool docs: a bar set by the catalog, not by one embedder's cosine scale.
    """

    def __init__(self, skills: Sequence[Skill], embedder: Embedder, percentile: float = 97.0):
        self.skills = list(skills)
        self.embedder = embedder
        self.percentile = percentile
        texts = [f"{s.name.replace('-', ' ')}: {s.description}" for s in self.skills]
        self._vectors = np.asarray(embedder.embed(texts, kind="document")) if texts else None

    def recall(self, goal_vector: np.ndarray, tool_cosines: np.ndarray) -> list[Skill]:
        """Skills whose similarity clears the bar set by the goal's cosines over tool docs."""
        if self._vectors is None or tool_cosines.size == 0:
            return []
        scores = self._vectors @ goal_vector
        bar = float(np.percentile(tool_cosines, self.percentile))
        best = int(np.argmax(scores))
        return [self.skills[best]] if scores[best] >= bar else []

    def recall_skill(self, goal: str, tool_vectors: np.ndarray) -> list[Skill]:
        """Embed ``goal`` and match it (``tool_vectors``: the catalog's doc embeddings)."""
        vec = np.asarray(self.embedder.embed([goal], kind="query"))[0]
        return self.recall(vec, tool_vectors @ vec)

"""The allowed catalog a session selects from, prepared once per allowed set.

What depends on the catalog as a whole (the :class:`Selector` and its index, the skill library,
per-tool token counts, the bundle menu, the eager cost) is :class:`Prepared` again only when the
allowed set changes. :meth:`AllowedCatalog.scores` asks the selector and the learned signals what
a turn needs, once; :meth:`AllowedCatalog.choose` turns those scores into a :class:`Plan` by the
pure rules of :mod:`~tooltray.memory.core.policy`, without a store or an embedder, and the
turn's pure decision (:mod:`~tooltray.memory.core.decision`) appends it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tooltray.memory.config import Settings
from tooltray.memory.core.decision import Due, Growth, Scores
from tooltray.memory.core.decision import Plan as Plan
from tooltray.memory.core.menu import LIST_HINT, listed, names_all, used_menu
from tooltray.memory.core.policy import (
    Caps,
    Listed,
    Opening,
    Profile,
    admit,
    admit_growth,
    everything,
    later_needs,
    lists_everything,
    menu_price,
    order_candidates,
    priced,
    profile_named,
    unnamed,
)
from tooltray.memory.core.policy import opening as open_picks
from tooltray.memory.core.prompt import PromptView, bundle_menu, defers, note, text_block
from tooltray.memory.core.session import MODE_ALL, MODE_SELECTED, SessionState
from tooltray.memory.embedders.base import Progress, normalise
from tooltray.memory.learning.generic import generic_tools
from tooltray.memory.learning.lessons import Embedded
from tooltray.memory.learning.usage import (
    Explained,
    Prior,
    declared,
    found_priors,
    merged,
    priors,
    unopened,
    usual,
    with_mates,
)
from tooltray.memory.metatools.meta_tools import FallbackAnswer, directory, shown_meta_specs
from tooltray.memory.retrieval.scoring import Candidate, doc_text
from tooltray.memory.retrieval.selector import (
    IndexSelector,
    NoSignals,
    SelectionSignals,
    Selector,
    SessionSignals,
    build_selector,
    companions,
    lexical_selector,
    said,
)
from tooltray.memory.retrieval.skills import SkillLibrary, load_skills
from tooltray.memory.store.records import PinnedMenu, SessionSnapshot
from tooltray.memory.tuning import GENERIC_NEEDS, GROW_BAR, GROWTH_MISS, MENU_RENEW
from tooltray.tools.errors import TooltrayError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import (
    block_tokens,
    bundle_spans,
    count_tokens,
    state_once,
    tokens_per_tool,
)
from tooltray.tools.spec import ToolSpec

if TYPE_CHECKING:
    from tooltray.memory.embedders.base import EmbeddingCache


SelectorFactory = Callable[
    ["Sequence[ToolSpec]", "Settings", "EmbeddingCache | None", "Progress | None"], Selector
]
"""Builds a selector over the allowed tools (``progress(done, total)`` while it embeds them)."""
Asking = tuple[str, Sequence[str]]
"""Who asks a ``load_tools`` query: the session id and the user messages of its turn."""


PREFIXES_KEPT = 256


@dataclass
class Prepared:
    """What depends on the allowed catalog as a whole, prepared once per allowed set."""

    key: Any
    tokens: dict[str, int]
    eager_tokens: int
    menu: str
    fixed: int
    selector: Selector | None = None
    skills: SkillLibrary | None = None
    lexical: Selector | None = None
    spans: dict[str, list[str]] = field(default_factory=dict)
    unbuilt: bool = False
    #: tokens each tool adds on the session's own path (a text line on the text path): what the
    #: boundary prices, in the unit of ``eager_tokens``; ``tokens`` (native schemas) are what
    #: the caps count
    priced: dict[str, int] = field(default_factory=dict)
    #: the allowed tools by exact name, in catalog order: one lookup for a list of names
    allowed: dict[str, ToolSpec] = field(default_factory=dict)
    profile: Profile = field(default_factory=lambda: profile_named("price"))
    #: whether the fallback lists every tool (priced once per catalog, at its first fallback)
    fallback: FallbackAnswer | None = None
    #: each allowed tool's bundle, and the chances the ``implicit`` setting declares
    bundle_of: dict[str, str | None] = field(default_factory=dict)
    implicit: dict[str, float] | None = None
    #: the catalog's generic tools (tool -> capability), found once its vectors are in
    generic: dict[str, str] | None = None
    #: their bundles, which a cut menu names first (``None``: the menu was decided without them)
    ahead: tuple[str, ...] | None = None
    #: which tools a past request would have found itself (what usage priors leave uncounted)
    explained: Explained | None = None
    #: the bundles the menu names (read off the menu once, with it)
    named: frozenset[str] = frozenset()
    #: what the menu was decided for, and the session boundaries since (:meth:`AllowedCatalog.pin`)
    menu_key: str = ""
    boundaries: int = 0
    #: the bundles another menu a session pinned names (:meth:`AllowedCatalog.menu_for`)
    named_in: dict[str, frozenset[str]] = field(default_factory=dict)

    #: prefix views rendered for this catalog (see ``trinket._prefix``), a few hundred at most
    prefixes: dict[tuple[Any, ...], PromptView] = field(default_factory=dict)

    @property
    def menu_shown(self) -> bool:
        """Whether the prefix shows the menu (else ``LIST_HINT``, and ``*`` lists the bundles)."""
        return self.menu != LIST_HINT

    def keep_prefix(self, key: tuple[Any, ...], view: PromptView) -> None:
        """Remember a rendered prefix view; the oldest half goes when the cache is full."""
        if len(self.prefixes) >= PREFIXES_KEPT:
            for old in list(self.prefixes)[: PREFIXES_KEPT // 2]:
                del self.prefixes[old]
        self.prefixes[key] = view

    def pick(self, names: Sequence[str]) -> list[ToolSpec]:
        """The allowed tools called exactly ``names``, in that order (others left out)."""
        allowed = self.allowed  # map, not a comprehension: one code object fewer on a turn
        return list(map(allowed.__getitem__, filter(allowed.__contains__, names)))


@dataclass(frozen=True)
class Record:
    """What a deployment's past sessions say about its bundles, for the menu: per bundle the
    decayed count of sessions that used it (most first), and the share of sessions that used
    one no other did (:meth:`~tooltray.memory.learning.usage.Usage.novel`)."""

    uses: dict[str, float] = field(default_factory=dict)
    novel: float = 1.0


def guessed(ahead: Sequence[str]) -> Record:
    """A record for a deployment without one: its generic tools' servers (``ahead``) take
    ``GENERIC_NEEDS`` of the needs a menu answers, the rest fall anywhere. A need to name a
    server is a search that missed, and a search misses what the task does not name: a code
    runner, a shell, files, fetch (mcp300: 61 of 93 bundle loads; the issue's real sessions:
    91 of 99 misses). Without ``ahead``, no record."""
    return Record(dict.fromkeys(ahead, 1.0), 1.0 - GENERIC_NEEDS) if ahead else Record()


class AllowedCatalog:
    """The allowed tools as selection reads them: prepared once per allowed set
    (:meth:`prepared`), scoring a turn's conversation (:meth:`scores`) and choosing its picks.

    Args:
        registry: the tools; only allowed ones are ever proposed.
        settings: caps, growth policy, activation threshold, embedder and skills folder.
        store: where tool-doc embeddings are cached (``None``: in memory only); the trinket
            passes its journal, so a call's vectors go in the call's one transaction.
        signals: what was learned from past sessions (default: nothing, a cold start).
        selector: builds stages 1-3 of selection over the allowed tools (default: the hybrid
            index, :func:`~tooltray.memory.retrieval.selector.build_selector`).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        settings: Settings,
        store: EmbeddingCache | None = None,
        signals: SelectionSignals | None = None,
        selector: SelectorFactory = build_selector,
    ):
        self.registry = registry
        self.build_selector = selector
        self.settings = settings
        self.store = store
        self.signals: SelectionSignals = signals if signals is not None else NoSignals()
        self._prepared: Prepared | None = None
        self._directories: tuple[str, dict[frozenset[str], int]] = ("", {})

    def prepared(self) -> Prepared:
        """Token counts, menu and eager cost of the allowed catalog (rebuilt when it changes)."""
        key = (self.registry.fingerprint, self.settings.path, self.settings.reveal)
        if self._prepared is None or self._prepared.key != key:
            specs = self.registry.allowed()
            spans = bundle_spans(specs) if self.settings.boilerplate_once else {}
            specs = state_once(specs, spans)
            path = self.settings.path if self.settings.path != "text" else "openai"
            tokens = tokens_per_tool(specs, path)
            priced = tokens_per_tool(specs, self.settings.path)
            eager = self._eager(specs)
            menu = self._menu(profile_named(self.settings.cost_profile))
            fixed = self._fixed(menu)
            self._prepared = Prepared(key, tokens, eager, menu, fixed, spans=spans, priced=priced)
            self._prepared.allowed = {s.name: s for s in self.registry.allowed()}
            self._prepared.profile = profile_named(self.settings.cost_profile)
            self._prepared.named = frozenset(listed(menu))
            self._prepared.menu_key = self._menu_key()
        return self._prepared

    def _menu(self, profile: Profile, ahead: Sequence[str] = ()) -> str:
        """The bundle menu, or (``menu = "never"``, or priced dearer than listing the bundles
        when a session needs them: :func:`~.policy.menu_price`) the one-line hint; a menu that
        leaves bundles out names first the bundles the deployment's record used (without one,
        those ``ahead``: the generic tools' servers, :func:`guessed`), and weighs their names
        alone. Decided once per prepared catalog, so the prefix stays byte-stable."""
        bundles, choice = self.registry.bundles(), self.settings.menu
        menu = bundle_menu(bundles)
        if not menu or choice == "never":
            return menu and LIST_HINT
        if len(listed(menu)) >= len(bundles):  # names every bundle: no record to read
            return menu if choice == "always" or self._pays(menu, profile) else LIST_HINT
        record = self._record()
        record = record if record.uses else guessed(ahead)
        menu = bundle_menu(bundles, used=list(record.uses))
        if choice == "always":
            return menu
        shown = [menu, used_menu(bundles, record.uses)] if record.uses else [menu]
        return min([*shown, LIST_HINT], key=lambda m: self._price(m, record, profile))

    def _pays(self, menu: str, profile: Profile) -> bool:
        """Whether a menu naming every bundle costs no more than the hint (no record read)."""
        return self._price(menu, Record(), profile) <= self._price(LIST_HINT, Record(), profile)

    def _price(self, menu: str, record: Record, profile: Profile) -> float:
        """:func:`~.policy.menu_price` of ``menu`` with the directory of what it leaves out."""
        named = frozenset(listed(menu))
        sizes = {b.name: len(b.members) for b in self.registry.bundles()}
        left = unnamed(named, sizes, record.uses, record.novel)
        tokens, rest = self._directory_tokens(frozenset()), self._directory_tokens(named)
        return menu_price(count_tokens(menu).n, Listed(tokens, rest, left), profile)

    def _directory_tokens(self, named: frozenset[str]) -> int:
        """Tokens of the bundles directory less ``named``, kept per allowed catalog: a decision
        prices up to three menus, each against the whole directory and its own remainder."""
        fingerprint = self.registry.fingerprint
        if self._directories[0] != fingerprint or len(self._directories[1]) > 16:
            self._directories = (fingerprint, {})
        known = self._directories[1]
        if named not in known:
            known[named] = count_tokens(directory(self.registry, True, named)).n
        return known[named]

    def _record(self) -> Record:
        """The bundles past sessions used, most used first (a bundle sums its tools' decayed
        uses: a session using three of its tools counts three times, not once as in
        ``Usage.server_shares``), and the share of sessions that used one no other did."""
        usage = self.signals.usage()
        bundle_of = {s.name: s.bundle for s in self.registry.allowed()}
        counts: dict[str, float] = {}
        for tool, n in usage.uses.items():
            if (bundle := bundle_of.get(tool)) is not None:
                counts[bundle] = counts.get(bundle, 0.0) + n
        ranked = sorted(counts, key=lambda b: (-counts[b], b))
        return Record({b: counts[b] for b in ranked}, usage.novel(bundle_of))

    def shown(self, specs: Sequence[ToolSpec]) -> list[ToolSpec]:
        """``specs`` as the model sees them: with ``boilerplate_once``, each bundle's shared
        span stays on its first tool in ``specs`` and is cut from the others."""
        return state_once(specs, self.prepared().spans)

    def _fixed(self, menu: str) -> int:
        """Tokens selection shows whatever it picks: the meta-tools the view leads with (the
        ``call_tool`` bridge when revealing by appending, unless the provider defers tools)
        and the bundle menu."""
        deferring = defers(self.settings.path, self.settings.reveal, {})
        return self._eager(shown_meta_specs(self.settings.reveal, deferring)) + count_tokens(menu).n

    def _eager(self, specs: Sequence[Any]) -> int:
        if self.settings.path == "text":
            return count_tokens(text_block(specs)).n
        return block_tokens(specs, self.settings.path)

    def menu(self) -> str:
        """The bundle menu for the stable prefix."""
        return self.prepared().menu

    def named(self) -> frozenset[str]:
        """The bundles the menu names: a fallback's directory of bundles need not repeat them,
        nor a search's answer its next matches' bundles."""
        return self.prepared().named

    def pin(self) -> PinnedMenu:
        """What a session boundary stores of the menu (``meta["menu"]``): its text, shown until
        the session's next boundary, and what it was decided for (:meth:`_menu_key`). Every
        ``MENU_RENEW`` boundaries the menu is decided again first: a cut menu reads the
        deployment's record, so a long-lived process follows the servers its sessions use
        (each session keeps the menu it pinned); and once, at the first boundary after the
        catalog's vectors are in, for its generic tools (:meth:`_found_ahead`)."""
        cat = self.prepared()
        cat.boundaries += 1
        renew = cat.boundaries % MENU_RENEW == 0 or self._found_ahead(cat)
        if renew and (menu := self._menu(cat.profile, cat.ahead or ())) != cat.menu:
            cat.menu, cat.fixed, cat.named = menu, self._fixed(menu), frozenset(listed(menu))
            cat.fallback = None  # priced with the menu it replaces (shown or not, its names)
        return {"of": cat.menu_key, "text": cat.menu}

    def _found_ahead(self, cat: Prepared) -> bool:
        """Whether the generic tools' servers are known just now (``cat.ahead``): once the
        catalog's vectors are in, a cut menu is decided again with them standing in for a
        record (:func:`guessed`). A task needs them without naming them, so no search finds
        them: on mcp300, 25 of 36 fallbacks went to the code runner's server (bench/README.md,
        stop 49). A menu naming every bundle has none to put first: never asked."""
        if cat.ahead is not None:
            return False
        if names_all(tuple(self.registry.bundles())):
            cat.ahead = ()  # once per catalog, not a hash of every bundle at every boundary
            return False
        try:
            explained = self._explained()
        except TooltrayError:  # the embedder is down: the turn degrades, asked again later
            return False
        if explained is None:  # no vectors yet (a lexical start)
            return False
        found = self._generic(explained)
        if cat.generic is None:  # the embedder failed: asked again at the next boundary
            return False
        cat.ahead = tuple(dict.fromkeys(b for n in found if (b := cat.allowed[n].bundle)))
        return bool(cat.ahead)

    def _menu_key(self) -> str:
        """The allowed catalog and the settings a menu is decided by, as one digest."""
        s = self.settings
        shown = f"{self.registry.fingerprint} {s.menu} {s.cost_profile} {s.path} {s.reveal}"
        return hashlib.sha256(shown.encode()).hexdigest()[:16]

    def menu_for(self, meta: Mapping[str, Any]) -> tuple[str, frozenset[str]]:
        """The menu a session shows, and the bundles it names: the one pinned at its last
        boundary while the allowed catalog and the settings that decide a menu are the ones
        it was decided for, else this process's. A cut menu also follows the deployment's
        record, so processes started at different times decide different ones; pinned, a
        session's prefix survives a restart or a move to another process, while a changed
        catalog or setting shows at once."""
        pinned, cat = meta.get("menu"), self.prepared()
        if not isinstance(pinned, dict) or pinned.get("of") != cat.menu_key:
            return cat.menu, cat.named
        text = pinned.get("text")
        if not isinstance(text, str) or text == cat.menu:
            return cat.menu, cat.named
        if text not in cat.named_in:
            cat.named_in = {text: frozenset(listed(text))}  # one other menu at a time
        return text, cat.named_in[text]

    def eager_tokens(self) -> int:
        """Tokens of the tool part had every allowed tool been exposed."""
        return self.prepared().eager_tokens

    def selector(self, progress: Progress | None = None) -> Selector:
        """Stages 1-3 over the allowed tools (built once per catalog).

        Args:
            progress: called as ``progress(done, total)`` while the catalog is embedded.
        """
        cat = self.prepared()
        if cat.selector is None:
            specs = self.registry.allowed()  # whole descriptions: cutting spans cost C@10 1.8
            cat.selector = self.build_selector(specs, self.settings, self.store, progress)
        return cat.selector

    def skills(self) -> SkillLibrary | None:
        """The skill library, or ``None`` when no skills folder is configured."""
        cat = self.prepared()
        if cat.skills is None and self.settings.skills_dir is not None:
            skills = load_skills(self.settings.skills_dir)
            embedder = self.selector().embedder
            cat.skills = SkillLibrary(skills, embedder) if skills and embedder is not None else None
        return cat.skills

    def all_fit(self) -> bool:
        """True while every allowed tool fits under the activation share of the window."""
        budget = self.settings.activation_share * self.settings.context_window
        return sum(self.prepared().tokens.values()) <= budget

    def search(
        self, query: str, exclude: Collection[str] = (), asking: Asking | None = None
    ) -> list[Candidate]:
        """Tools for a ``load_tools`` query: the strongest matches and their bundle-mates, none
        of ``exclude`` (the tools already loaded).

        Given ``asking`` (the session and the user messages of its turn) and a deployment with
        history, the tools that past sessions went on to use after a request like the query, or
        like the turn's request, or after a search like the query, join the matches
        (:func:`~tooltray.memory.retrieval.selector.with_votes`); without history the answer is
        the query's matches alone.

        Raises:
            EmbedderError: the embedder is down (:meth:`search_lexically` still answers).
        """
        selector = self.selector()
        if asking is not None and isinstance(selector, IndexSelector):  # ranked with the turn
            found = selector.search(query, exclude, context=asking[1])
        else:  # a selector passed in answers the query as its protocol says
            found = selector.search(query, exclude)
        if asking is None or not found:
            return found
        answer = self._voted(selector, query, found, exclude, asking)
        if asking[1]:  # an opening selected on the turn's text, priors included
            return answer
        room = sum(not c.mention for c in found) // 2  # as votes: the matches stay the most
        known = self.priors(SessionSignals(self.signals, asking[0]), fresh=False)
        return unopened(answer, known, exclude, room)

    def _voted(
        self,
        selector: Selector,
        query: str,
        found: list[Candidate],
        exclude: Collection[str],
        asking: Asking,
    ) -> list[Candidate]:
        """``found`` with the votes of past requests like the query or the turn's request, and
        of past searches like the query (:meth:`search`)."""
        vectors, asked = [], selector.vector_of(query)
        for known in (asked, self.request(asking[1])[1]):
            if known is not None:
                vectors.append(np.asarray(known[1], np.float32))
        if not vectors:
            return found
        stack = normalise(np.vstack(vectors))
        votes = dict(self.signals.past_requests(stack, [1.0] * len(stack), asking[0], fresh=False))
        searched = self.signals.past_searches(stack[0], asking[0]) if asked else {}
        for name, vote in searched.items():  # either retriever's vote, on one scale
            votes[name] = max(vote, votes.get(name, 0.0))
        return selector.voted_search(query, found, votes, exclude) if votes else found

    def query_vector(self, query: str) -> Embedded | None:
        """A ``load_tools`` query's ``(embedder id, vector)`` for its turn's lesson (``None``
        when the turn's request gets none: no selector, the embedder down)."""
        lessons = self._lessons()
        return lessons.vector_of(query) if lessons is not None else None

    def search_lexically(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        """:meth:`search` by the lexical half alone, which needs no embedder.

        A ``load_tools`` query must get an answer while the embedder is down, even when the
        selector could not be built at all (its catalog embedding failed).
        """
        cat = self.prepared()
        if cat.selector is not None:
            return cat.selector.lexical(query, exclude)
        if cat.lexical is None:
            cat.lexical = lexical_selector(self.registry.allowed(), self.settings)
        return cat.lexical.lexical(query, exclude)

    def _lessons(self) -> Selector | None:
        """The selector as learning reads it, built if this process has none yet (a resumed
        session); ``None`` when every tool fits, the embedder is down or it teaches nothing."""
        cat = self.prepared()
        if cat.selector is None and (cat.unbuilt or self.all_fit()):
            return None
        try:
            selector = self.selector()
        except TooltrayError:
            cat.unbuilt = True  # one try per catalog: a turn's end must not wait on an outage
            return None
        return selector

    def request(self, users: Sequence[str]) -> tuple[str | None, Embedded | None]:
        """Which of a turn's user messages asked for what it used (the first task message),
        and its ``(embedder id, vector)``: what learning stores and what usage priors test.

        After "add a reminder", "user1", "my password is x" the call follows the credentials, but
        the request is the first message; storing its vector lets a later "set a reminder" find
        this turn. A follow-up (matching nothing strongly) is never the request while a task
        message exists. Without a retrieval index, the latest message and no vector. A process
        that resumed the session after its selection builds the selector here (the catalog's
        vectors are cached in the store), so a restart does not lose the lesson's vector.
        """
        texts = said(users)
        lessons = self._lessons() if texts else None
        if lessons is None:
            return (texts[-1] if texts else None), None
        text = lessons.request_of(texts)
        return text, lessons.vector_of(text)

    def plan(
        self, state: SessionState, users: Sequence[str], *, initial: bool, fresh: int = 1
    ) -> Plan:
        """Initial selection (start/resume) or growth (later turns, append-only); ``fresh``
        counts the user messages since the last growth: :meth:`scores`, then :meth:`choose`."""
        due = Due(initial, fresh, state.marks)
        return self.choose(state.snapshot, due, self.scores(state.snapshot, users, due))

    def scores(self, snapshot: SessionSnapshot, users: Sequence[str], due: Due) -> Scores:
        """What the selection ``due`` needs of the conversation, asked once: the selector's
        picks and growth, the session's needs and its skills, with the learned signals read
        once (one :class:`SessionSignals` for the call). Raises while the embedder is down."""
        signals = SessionSignals(self.signals, snapshot.session_id)
        if due.first:
            if self._fits():
                return Scores()
            picks = self._picks(users, signals)
            needs = self._needs(users) if self.settings.opening != "share" else 0.0
            skills = self._skill_tools(users)
            return Scores(picks, needs, skills, self._resumed(snapshot, users, due, signals))
        if snapshot.meta.get("mode", MODE_SELECTED) == MODE_ALL:
            return Scores()
        if self.settings.growth != "every_turn":
            return Scores(growth=self._growth_scores(snapshot, users, due.fresh, signals))
        picks = self._picks(users, signals)
        return Scores(picks, growth=self._resumed(snapshot, users, due, signals))

    def choose(self, snapshot: SessionSnapshot, due: Due, scores: Scores) -> Plan:
        """The plan ``scores`` call for (pure over the prepared catalog): at a boundary every
        tool or the priced opening under the caps, later growth appended under
        ``hard_max_tools``, nothing in ``all`` mode."""
        if not due.first:
            return self._grow(snapshot, scores)
        fits = self._fits()
        opening = self._opening(scores.picks)
        if fits or self._everything(opening, scores.needs):
            have = set(snapshot.names())
            names = [s.name for s in self.registry.allowed()]
            return Plan(MODE_ALL, [Candidate(n, "all") for n in names if n not in have])
        cands = order_candidates(self._core(), scores.skills, opening.held)
        return self._admitted(snapshot, scores, cands)

    def _grow(self, snapshot: SessionSnapshot, scores: Scores) -> Plan:
        """A later turn: nothing in ``all`` mode, else growth (every turn's picks under the
        caps with ``growth = "every_turn"``)."""
        if snapshot.meta.get("mode", MODE_SELECTED) == MODE_ALL:
            return Plan(MODE_ALL)
        if self.settings.growth != "every_turn":
            return Plan(MODE_SELECTED, self._grown(snapshot, scores.growth or Growth()))
        return self._admitted(snapshot, scores, scores.picks)

    def _admitted(self, snapshot: SessionSnapshot, scores: Scores, cands: list[Candidate]) -> Plan:
        """``cands`` admitted in order under the caps, then what a resumed session grows."""
        cat = self.prepared()
        cands = [c for c in cands if c.name in cat.allowed]
        caps = Caps(self.settings.max_tools, self.settings.token_budget)
        picks = admit(cands, cat.tokens, caps, snapshot.loaded)
        return Plan(MODE_SELECTED, picks + self._resume_growth(snapshot, scores.growth, picks))

    def _fits(self) -> bool:
        """Every tool loads without scoring: the ``share`` rule says so, or (``priced``) the
        whole catalog costs no more than selection's fixed part (meta-tools, bridge, menu)."""
        if self.settings.opening == "share":
            return self.all_fit()
        return self.eager_tokens() <= self.fixed_tokens()

    def _everything(self, opening: Opening, needs: float) -> bool:
        """The boundary's one priced decision (:func:`~.policy.everything`): every tool, or the
        selection's fixed part, CORE and the priced opening. ``opening = "share"`` keeps the
        activation-share rule."""
        if self.settings.opening == "share":
            return False
        cat = self.prepared()
        held = cat.fixed + self._core_tokens() + opening.tokens
        return everything(cat.eager_tokens, held, opening, needs, cat.profile)

    def _needs(self, users: Sequence[str]) -> float:
        """The chance mass a session spreads over the catalog: a tool for each task its message
        states (the first turn's), plus what its later turns add that growth misses."""
        return max(self.selector().tasks(users), 1) + self._later()

    def _later(self) -> float:
        """What later turns add that growth misses: the prior, moved by past sessions."""
        mean, n = self.signals.session_needs(GROWTH_MISS)
        first, _ = self.signals.session_needs(0.0)
        return later_needs(mean, first, n)

    def _opening(self, picks: Sequence[Candidate]) -> Opening:
        cat, share = self.prepared(), self.settings.opening == "share"
        return open_picks(picks, cat.priced, cat.profile, share=share, size=len(cat.allowed))

    def fallback_answer(self, named: Collection[str] = ()) -> FallbackAnswer:
        """What ``load_tools(["*"])`` answers, priced once per catalog: every listing unless
        :func:`~.policy.lists_everything` finds a directory and one round trip cheaper; then the
        names by bundle or the bundles alone, whichever is smaller with what the model then
        loads (one tool's listing by name, or its whole bundle's: size-weighted, since a needed
        tool lies in a large bundle more often); the bundles less those the menu ``named``.
        A prefix without a menu gets the bundles (or every listing): the menu's own price."""
        cat = self.prepared()
        if cat.fallback is None and not cat.menu_shown:
            cat.fallback = self._bundles_or_listing()
        if cat.fallback is None:
            names = count_tokens(directory(self.registry)).n
            if lists_everything(self._listing_tokens(), names, cat.profile):
                cat.fallback = "listing"
            else:
                by_name, by_bundle = self._after_directory()
                bundles = count_tokens(directory(self.registry, True, named)).n
                cat.fallback = "bundles" if bundles + by_bundle < names + by_name else "names"
        return cat.fallback

    def _bundles_or_listing(self) -> FallbackAnswer:
        """Without a menu, ``*`` is how a model learns the bundles: their directory (what the
        menu's decision priced), unless every listing costs no more."""
        bundles = count_tokens(directory(self.registry, True)).n
        listing = lists_everything(self._listing_tokens(), bundles, self.prepared().profile)
        return "listing" if listing else "bundles"

    def _after_directory(self) -> tuple[float, float]:
        """The mean tokens one tool's listing and one needed tool's whole bundle add."""
        tokens = self.prepared().priced
        sizes = [[tokens[m] for m in b.members if m in tokens] for b in self.registry.bundles()]
        total = max(sum(map(len, sizes)), 1)
        by_bundle = sum(len(b) * sum(b) for b in sizes) / total
        return sum(tokens.values()) / max(len(tokens), 1), by_bundle

    def _listing_tokens(self) -> int:
        """What a fallback that lists every tool shows: their note (revealed by appending) or
        the whole catalog in the prefix."""
        if self.settings.reveal != "append":
            return self.eager_tokens()
        specs = self.shown(self.registry.allowed())
        return count_tokens(note(specs, self.settings.path != "text")).n

    def profile(self) -> Profile:
        """The cost profile the boundary's decision minimises (``cost_profile``)."""
        return self.prepared().profile

    def fixed_tokens(self) -> int:
        """What selection always shows: the meta-tools (and the bridge) and the bundle menu."""
        return self.prepared().fixed

    def _core_tokens(self) -> int:
        tokens = self.prepared().priced
        return sum(tokens.get(n, 0) for n in self._core())

    def _growth_scores(
        self, snapshot: SessionSnapshot, users: Sequence[str], fresh: int, signals: SessionSignals
    ) -> Growth:
        """A later turn's growth candidates and (revealed by appending, priced) the boundary's
        picks over the same conversation, which the selector scores once for both."""
        names = snapshot.names()
        grown = self.selector().growth(users, signals, names, fresh)
        if self.settings.reveal != "append" or self.settings.opening != "priced":
            return Growth(grown)
        return Growth(grown, self.selector().boundary(users, signals))

    def _grown(self, snapshot: SessionSnapshot, growth: Growth) -> list[Candidate]:
        """A later turn's growth: the conversation's strongest tools, up to ``hard_max_tools``,
        and (revealed by appending, priced) the conversation's picks worth revealing."""
        taken = set(snapshot.names()) | {c.name for c in growth.grown}
        cands = growth.grown + self._worth_revealing(growth.boundary, taken)
        cands = [c for c in cands if c.name in self.prepared().allowed]
        return admit_growth(cands, snapshot.loaded, self.settings.hard_max_tools)

    def follow(self, state: SessionState, used: Sequence[str]) -> list[Candidate]:
        """What the session's calls of ``used`` point to next, where no user text arrives
        between calls (an MCP gateway): their learned companions, then growth over the
        session's user texts with the tools' own texts as its newest message. Admitted like a
        later turn's growth (append-only, under ``hard_max_tools``); nothing in ``all`` mode,
        with ``growth = "never"``, or for a tool not allowed."""
        specs = self.prepared().pick(used)
        if not specs or state.selection_mode == MODE_ALL or self.settings.growth == "never":
            return []
        users = [*state.user_texts, " ".join(doc_text(s) for s in specs)]
        signals = SessionSignals(self.signals, state.session_id)
        grown = self._grown(state.snapshot, self._growth_scores(state.snapshot, users, 1, signals))
        top = max((c.score or 0.0 for c in grown), default=GROW_BAR)
        learned = self.signals.companions([s.name for s in specs])
        mates = companions(learned, top, self.prepared().allowed.__contains__)
        return admit_growth(mates + grown, state.snapshot.loaded, self.settings.hard_max_tools)

    def _worth_revealing(
        self, picks: Sequence[Candidate] | None, taken: set[str]
    ) -> list[Candidate]:
        """What the conversation now points to and a reveal pays for: its picks (as a boundary
        would score them) whose expected saved escape outweighs appending them. A reveal costs
        its tokens once and cached reads after, so it is priced like holding; the prefix path
        keeps growth's own bar, since there each change re-prefills the conversation."""
        if picks is None:
            return []
        cat = self.prepared()
        rows = priced(picks, cat.priced, cat.profile, len(cat.allowed))
        return [c for c, _, _, keep in rows if keep and c.name not in taken]

    def _resumed(
        self, snapshot: SessionSnapshot, users: Sequence[str], due: Due, signals: SessionSignals
    ) -> Growth | None:
        """The growth scores a selection under the caps adds to (:meth:`_resume_growth`): for a
        session that selected before, with user text, where growth is on."""
        picked = [t for t in snapshot.loaded if t.source not in ("core", "pinned", "all")]
        if not picked or not users or self.settings.growth == "never":
            return None
        return self._growth_scores(snapshot, users, due.fresh, signals)

    def _resume_growth(
        self, snapshot: SessionSnapshot, growth: Growth | None, picks: Sequence[Candidate]
    ) -> list[Candidate]:
        """At the resume of a session that selected before, what growth would add this turn.

        The resumed session's earlier picks already fill the caps, so the boundary's own
        selection admits little; without this a resumed turn loaded nothing that the same turn
        uninterrupted grows (the demo played in pieces ended at 0.90 first-pass with 2 escapes,
        at once 1.00 and 0, on stores with the same history).
        """
        if growth is None:
            return []
        taken = {c.name for c in picks}
        room = self.settings.hard_max_tools - len(snapshot.loaded) - len(picks)
        grown = [c for c in self._grown(snapshot, growth) if c.name not in taken]
        return grown[: max(room, 0)]

    def _core(self) -> list[str]:
        pinned = [s.name for s in self.registry.allowed() if s.pinned]
        extra = [n for n in self.settings.core if self.registry.is_allowed(n)]
        return list(dict.fromkeys(pinned + extra))

    def _picks(self, users: Sequence[str], signals: SelectionSignals) -> list[Candidate]:
        if not users:
            return []
        picks = usual(self.selector().boundary(users, signals), self.priors_for(users, signals))
        explained = self._explained()
        if self.settings.opening != "priced" or explained is None or not explained.telling:
            return picks
        cat = self.prepared()
        usage = signals.usage(explained=explained)
        record = usage.servers_found(cat.bundle_of)
        within = usage.within(cat.bundle_of)
        return with_mates(picks, within, len(cat.allowed), cat.bundle_of, record)

    def priors_for(self, users: Sequence[str], signals: SelectionSignals) -> dict[str, Prior]:
        """:meth:`priors` less the usage priors of the tools this request would find itself, by
        the test that made them priors (:class:`Explained`, on the request learning stores): a
        past use counted only where its request missed the tool, so a request that finds it
        has no prior to add. A found tool takes instead the share of the past finds that used
        it (:func:`found_priors`). Declared (``implicit``) chances stay."""
        known = self.priors(signals)
        explained = self._explained()
        given = self.request(users)[1] if explained is not None else None
        if explained is None or given is None:
            return known
        found = explained.found(np.asarray(given[1], np.float32)[None, :])[0]
        kept = {n: p for n, p in known.items() if p.source != "usage" or n not in found}
        if not explained.telling:
            return kept
        usage, priced = signals.usage(explained=explained), self.settings.opening == "priced"
        return merged(kept, found_priors(usage, found, self.prepared().bundle_of, priced=priced))

    def priors(self, signals: SelectionSignals, fresh: bool = True) -> dict[str, Prior]:
        """Each tool's usage prior or declared chance (:mod:`~tooltray.memory.learning.usage`):
        a boundary candidate whatever the message says. A later turn's reveals do not ask: the
        same chance did or did not pay at the boundary. Without ``fresh``, from what the last
        prepare read (a search begins no transaction of its own)."""
        cat = self.prepared()
        if cat.implicit is None:
            cat.bundle_of = {name: spec.bundle for name, spec in cat.allowed.items()}
            cat.implicit = declared(self.settings.implicit, cat.bundle_of)
        explained = self._explained()
        usage = signals.usage(explained=explained, fresh=fresh)
        priced = self.settings.opening == "priced"
        generic = self._generic(explained) if self.settings.generic == "detect" else None
        return priors(usage, cat.implicit, cat.bundle_of, priced=priced, generic=generic)

    def _generic(self, explained: Explained | None) -> dict[str, str]:
        """The catalog's generic tools (:func:`generic_tools`) over ``explained``'s vectors,
        found once per catalog when they are in; none before (a lexical start) or while the
        embedder is down."""
        cat = self.prepared()
        if cat.generic is not None or explained is None:
            return cat.generic or {}
        position = explained.position
        selector, names = self.selector(), sorted(position, key=position.__getitem__)

        def embed(phrase: str) -> Any:
            known = selector.vector_of(phrase)
            return None if known is None else np.asarray(known[1], np.float32)

        try:
            cat.generic = generic_tools(explained.vectors, names, embed)
        except TooltrayError:
            return {}
        return cat.generic

    def _explained(self) -> Explained | None:
        """The catalog's document vectors and ``max_tools`` as :class:`Explained`, kept while
        the vectors are; ``None`` for a selector without them (its priors count every use)."""
        cat, selector = self.prepared(), self.selector()
        if not isinstance(selector, IndexSelector):
            return None
        index = selector.index
        docs = index.doc_vectors if index.doc_vectors is not None else index.vectors
        if docs is None:
            return None
        if cat.explained is None or cat.explained.vectors is not docs:
            cat.explained = Explained(index.position, docs, self.settings.max_tools)
        return cat.explained

    def _skill_tools(self, users: Sequence[str]) -> list[str]:
        library = self.skills()
        if library is None or not users:
            return []
        names: list[str] = []
        for skill in self.selector().recall_skills(library, users[-1]):
            names += [n for n in skill.tools_required if self.registry.is_allowed(n)]
        return list(dict.fromkeys(names))


Planner = AllowedCatalog
"""Deprecated: the former name of :class:`AllowedCatalog` (a catalog that also plans)."""

"""Every tuned value of selection, one line each: what it trades, and how it was measured.

Scores are calibrated z-scores over the catalog (:mod:`tooltray.memory.retrieval.scoring`), so a
bar here is in standard deviations, never a raw cosine. "retrieval" means ``bench/run.py
retrieval`` (R@10 / C@10 on the dev splits), "session" means ``bench/run.py session`` (first-pass
recall, escapes per turn, tool tokens of eager, prefix changes per session on bfcl_multiturn and
apibank); the tables behind each line are in ``bench/README.md`` ("Tuned values"). Change a value
here and rerun both suites: a move of any figure is a behaviour change.

This module imports nothing, so every layer may read it.
"""

# ----- fusion and scoring (one query over the catalog) ------------------------------------------
#: BM25's share of the fused z; fixed weights beat rank/per-query fusion (retrieval)
LEXICAL_WEIGHT = 0.4
#: the embedder's share; 0.6 was best on 4 of 5 dev corpora (retrieval)
DENSE_WEIGHT = 0.6
#: best sentence's weight beside the whole message: multi-task recall (retrieval)
SENTENCE_WEIGHT = 0.5
#: most sentences scored apart: bounds the query embedding's cost (latency)
MAX_SENTENCES = 8
#: a sentence shorter than this joins its neighbour: noise vs task split (retrieval)
MIN_SEGMENT_WORDS = 3
#: a query of at most this many word-pieces keeps only its content words, a longer one drops
#: Lucene's stop list: latency, and everyday requests' dense ranking (latency, retrieval)
COMPACT_OVER = 24
#: both retrievers this far out = the sides agree (Hit.agree): precision of growth (session)
AGREE_Z = 2.0
#: Hit.strong: share of the query's top a hit needs to count as strong (retrieval)
STRONG_RATIO = 0.8
#: a parameter's enum joins its tool's BM25 document when it lists at most this many values: a
#: tool found by what it takes (``languageId: python``) (retrieval; bench/README.md stop 51)
ENUM_TERMS = 50

# ----- the query (bench/run.py retrieval, query_modes) ------------------------------------------
#: a message with fewer content terms borrows the previous one: follow-ups (retrieval)
SHORT_TERMS = 5
#: the borrowed previous message's weight in ``adaptive`` (retrieval)
ADAPTIVE_WEIGHT = 0.5
#: the previous message's weight in ``weighted``: any steady share costs recall (retrieval)
WEIGHTED_WEIGHT = 0.25
#: under this many tools a z-score's spread borrows a prior: on 2 tools every z is +-1 and a
#: 0.013 cosine gap outweighed a clear BM25 match (tests/retrieval/test_small_catalog.py)
SMALL_CATALOG = 16
#: how many tools' worth of weight the prior spread carries beside the catalog's own
PRIOR_TOOLS = 4
#: the prior spread as a share of the scores' size (mcp-server-time's two tools, by hand)
PRIOR_SHARE = 0.25

# ----- bundles ----------------------------------------------------------------------------------
#: share of the best mate's score a tool gains: recall vs ~10% more tokens (retrieval)
LIFT = 0.2
#: bundles bigger than this are menus, never pulled in whole (session)
PULL_MAX_BUNDLE = 32
#: a pick this share of the top pulls its small bundle in: escapes vs tokens (session)
PULL_RATIO = 0.5
#: a pulled mate must stand this far above the catalog mean (session)
PULL_FLOOR = 0.5

# ----- the pick: over the bar, each sentence's best, mates ---------------------------------------
#: lowest bar in z: a flat query loads nothing weak (retrieval, picks tokens)
BAR_FLOOR = 2.0
#: bar = max(floor, ratio x top): 4-12 picks at ~1k tokens on every catalog (retrieval)
BAR_RATIO = 0.5
#: a sentence's best tools over this share of its top get a place (retrieval)
SENTENCE_RATIO = 0.85
#: at most this many places per sentence (retrieval)
SENTENCE_TOP = 3
#: the best 3 above the catalog mean always load: recall on flat queries (retrieval)
MIN_PICKS = 3
#: a load_tools answer's size, and most siblings beside a loaded best match (session)
SEARCH_K = 5
#: a load_tools answer's size when its query names the server (``server: ...``) (session)
SERVER_K = 8
#: share of the turn's request's scores added to a load_tools query's, asked in a turn: a
#: query is often a fragment of the task (bench/README.md stop 46: mcp20 / mcp70 in turn)
SEARCH_CONTEXT = 0.6
#: a load_tools query is in the model's own words when under this share of its words are in the
#: turn's messages: one place per server first (bench/README.md stop 54)
OWN_WORDS = 0.5
#: a load_tools query in the model's own words: its answer's places go first to each server's
#: best of this many matches (bench/README.md stop 54)
SPREAD_K = 15
#: share of an order's purpose's scores added to the order's (``run code to read a pdf``;
#: bench/README.md stop 50: model-written searches)
PURPOSE_SHARE = 0.3
#: share of a server line's kind (naming no bundle), each tool taking its server's best score
#: (bench/README.md stop 50: model-written searches in the ``<tool_assistant>`` shape)
KIND_SHARE = 0.5
#: a full load_tools answer takes up to TIE_K more tools scoring at least TIE_SHARE of its best
TIE_K = 3
TIE_SHARE = 0.85
#: a load_tools answer names the bundles of its next MENTION_K matches the menu does not name,
#: at most MENTION_BUNDLES of them (session)
MENTION_K = 20
MENTION_BUNDLES = 5
#: at most this many loaded tools named when a load_tools query matches only loaded ones
LOADED_K = 3

# ----- the conversation (every user message scored apart) ---------------------------------------
#: an earlier message's weight per task message after it: apibank follow-ups vs bfcl (session)
DECAY = 0.7
#: a message whose best z is under this is a follow-up, not a task (session)
FOLLOW_UP_TOP = 2.2
#: ... or under this share of the conversation's strongest message (session)
FOLLOW_UP_RATIO = 0.65
#: most recent user messages scored: cost vs apibank's long follow-ups (session)
MAX_MESSAGES = 6
#: share of several weak mentions' sum that counts toward growth (session)
EVIDENCE_SHARE = 0.6
#: learned past-request votes' weight as a third retriever (session, --past-split)
PAST_WEIGHT = 0.5
#: a past-request vote this strong loads its tool beside the picks (session, --past-split)
VOTE_MIN = 0.4
#: a learned companion this strong loads with its pick (session, --past-split)
COMPANION_MIN = 0.3
#: picks at least this share of the top bring their learned companions (session)
COMPANION_FROM = 0.5

# ----- growth (later turns, append-only) ---------------------------------------------------------
#: lowest z a later turn grows on: prefix changes vs escapes (session)
GROW_BAR = 2.5
#: growth bar = max(GROW_BAR, ratio x top of the growth score) (session)
GROW_RATIO = 0.8
#: most tools one growth adds (session)
GROW_K = 3
#: the current message's own weaker-side z a grown tool needs: no re-adds on "next" (session)
GROW_SUPPORT = 1.0
#: a new task's tools, judged on the message alone, clear this z (session)
FRESH_BAR = 2.2
#: ... and this share of the best of them (session)
FRESH_RATIO = 0.7
#: the message's best this-many tools decide whether it starts a new task (session)
FRESH_GATE = 2
#: ... and this share of the message's best: no distant runner-ups (session)
FRESH_SHARE = 0.6
#: closest bundle-mates a new task brings: bfcl_multiturn misses 39 -> 32 of 319 (session)
FRESH_MATES = 2
#: a fresh mate's own z on the message (session)
FRESH_MATE_FLOOR = 1.0
#: weaker vote that grows when the new message also matches the tool (session, --past-split)
NOW_VOTE_MIN = 0.25
#: ... the new message's own z for that tool (session, --past-split)
NOW_OWN_MIN = 1.0

# ----- the bundle menu ---------------------------------------------------------------------------
#: name words a bundle without a description shows: menu tokens vs telling bundles apart
MENU_WORDS = 6
#: o200k tokens the menu may take on every call: every dev corpus's whole menu fits (apibank 119,
#: bfcl_multiturn 157, mcp20 345), 70 MCP servers' lines do not (1,237); bench/README.md issue 35
MENU_BUDGET = 500
#: session boundaries a process serves between two decisions of its menu: a cut menu reads the
#: deployment's record, which grows with every session (each session keeps the menu it pinned)
MENU_RENEW = 20
#: chance a session needs to name a bundle it was not shown (the menu's use; without a menu,
#: one round trip to list the bundles): mcp70, `--searches mixed`, price deciding, no history,
#: 65 of 112 sessions loaded a bundle named by the menu (0.58); with the menu left out, 46 of
#: 112 needed the directory (0.41: a search's bundles line named the rest); with history 0.30.
#: The larger figure: leaving the menu out is the change, so it must pay at the upper bound
DIRECTORY_CHANCE = 0.58

# ----- the priced boundary (memory/core/catalog.py; bench/README.md "Priced selection") -------
#: chance a boundary pick is needed before growth could reveal it, by its fused z: its use on
#: the first turn plus GROWTH_MISS of its later use; apibank, bfcl_multiturn and bfcl_small dev
#: boundary picks against each conversation's gold (5,300 picks): holding vs escaping
NEEDED_BY_Z = (
    (6.0, 0.92),
    (5.0, 0.85),
    (4.0, 0.62),
    (3.5, 0.49),
    (3.0, 0.35),
    (2.0, 0.15),
    (1.5, 0.10),
    (1.0, 0.07),
)
#: the same chance by the pick's share of the top score (the top pick itself: 0.72)
NEEDED_BY_SHARE = ((1.0, 0.72), (0.9, 0.33), (0.8, 0.21), (0.65, 0.14))
#: the chance of a pick below every row of both tables (measured 0.02-0.07)
NEEDED_FLOOR = 0.05
#: share of a later turn's tools growth does not reveal in time (an escape): an estimate, the
#: first selection held 2.4 of a bfcl session's 3.65 later tools and growth most of the rest
GROWTH_MISS = 0.3
#: model calls a session makes after its boundary: bfcl_multiturn dev 9.1 (1,096 / 121),
#: apibank 3.5 (520 / 147); more calls favour holding fewer tools in the prefix
EXPECTED_CALLS = 6
#: tokens an escape re-reads (prefix and conversation at a mid-session call, bfcl ~2k)
ESCAPE_CONTEXT = 2000
#: tokens of an escape's answer: a load_tools listing of about five tools
ESCAPE_ANSWER = 150
#: escapes a selected session makes beyond its left-out picks' chances: about 0.05 a model call
#: (bfcl_multiturn 0.041, apibank 0.06, priced opening and reveals, no history) x EXPECTED_CALLS
ESCAPES_BASE = 0.3
#: a sentence states a task when its best tool clears this share of the message's top (BAR_RATIO)
#: and TASK_FLOOR: the distinct best tools count a message's first-turn tools. bench/run.py
#: needed on the dev splits' first turns (task count / first-turn tools): apibank 1.03 / 1.18,
#: bfcl_multiturn 1.84 / 1.67, bfcl_small 1.73 / 1.67, metatool 1.34 / 1.28, toolbench 2.49 /
#: 2.28, sealtools 2.97 / 2.74; the picks' summed chances: 1.94 / 3.11 / 1.33 / 1.69 / 11.5 / 10.2
TASK_RATIO = 0.5
#: ... a floor in z: one deviation over the catalog mean (2.0 missed bfcl_small's flat scores:
#: 1.36 tasks for 1.67 tools)
TASK_FLOOR = 1.0
#: the needs a session's later turns add that growth misses (GROWTH_MISS x their new tools),
#: before history says otherwise: the dev multi-turn mean is 0.6 (0.3 x (apibank 0.62 and
#: bfcl_multiturn 3.65 later tools over 268 sessions)), set above it because the errors cost
#: unequally: too low costs escapes (a round trip each), too high loads a catalog whole only
#: where that is cheap. 0.6 -> 0.8, no history (session): bfcl_small native first-pass 0.943 ->
#: 0.968 at latency 0.821 -> 0.810; apibank / bfcl_multiturn text latency +0.004 / +0.008.
#: A session's needs are its message's tasks plus this (SESSION_NEEDS 2.0 was both at once)
LATER_NEEDS = 0.8
#: past sessions' mean later needs count in like this many sessions of LATER_NEEDS (a prior):
#: a handful of sessions already moves the estimate, one odd session does not
NEEDS_PRIOR_SESSIONS = 5


#: the largest catalog the two tables were measured on (bfcl_multiturn 130 tools; apibank 70,
#: bfcl_small 17-40 a conversation). A larger catalog's picks are needed at lower odds: the
#: session needs a few of its tools whatever its size, so the prior odds of any one tool fall
#: with the size while a z (standardised over the catalog) says as much. mcp70 (1,323 tools):
#: 22 picks held for 0.32 first-pass; bench/README.md, "Where a session's price goes"
NEEDED_TOOLS = 130


def needed(z: float, top: float, tools: int = 0) -> float:
    """A boundary pick's chance of being needed, from its fused ``z`` and the top pick's, on a
    catalog of ``tools`` tools (0: the size the tables were measured on)."""
    by_z = next((c for floor, c in NEEDED_BY_Z if z >= floor), NEEDED_FLOOR)
    share = z / top if top > 0 else 0.0
    by_share = next((c for floor, c in NEEDED_BY_SHARE if share >= floor), NEEDED_FLOOR)
    return at_size(max(by_z, by_share), tools)


def at_size(chance: float, tools: int) -> float:
    """``chance`` measured on catalogs of :data:`NEEDED_TOOLS`, on a catalog of ``tools``: the
    odds scaled by the ratio of the sizes (never raised: a smaller catalog keeps the table's)."""
    if tools <= NEEDED_TOOLS or chance >= 1.0:
        return chance
    odds = chance / (1.0 - chance) * NEEDED_TOOLS / tools
    return odds / (1.0 + odds)


# ----- learned signals (memory/learning: companions and past requests) ---------------------------
#: pseudo-count beside a tool's own co-use weight: one session's co-use gives 0.25, two 0.4, under
#: the companion bar 0.3, so a habit pulls a mate in and a coincidence does not (session, history)
COMPANION_PRIOR = 3.0
#: mates seen in under this share of a tool's turns are not read: too weak to matter (session)
COMPANION_MIN_SHARE = 0.05
#: past requests that vote for a message's tools: more dilutes the nearest ones (session, history)
PAST_NEAREST = 5
#: cosine under which a past request does not vote; MiniLM's unrelated ones: 0.1-0.3 (session)
PAST_MIN_SIMILARITY = 0.5

# ----- usage priors (memory/learning/usage.py; bench/README.md "Implicit tools") ---------------
#: past sessions a deployment needs before its usage shares count: fewer are anecdotes (session)
USAGE_MIN_SESSIONS = 5
#: pseudo-sessions that used nothing, beside the real ones: a tool one of ten sessions used gets
#: 0.08, two 0.17, three 0.25 (session, history)
USAGE_PSEUDO = 2.0
#: a prior under this is no candidate: one use in five or more sessions (at most 0.14) is a
#: coincidence, and a gateway's ``share`` opening, which does not price, would hold it
USAGE_MIN_CHANCE = 0.15
#: ... unless this many (decayed) past sessions missed it and the opening prices it: a steady
#: share under the floor (3 of 20 sessions: 0.14) is a habit, not a coincidence, and the price
#: decides whether it pays; at 10 sessions or fewer the floor says the same (two uses: 0.17)
USAGE_MIN_USES = 2.0
#: chance of a tool the ``implicit`` setting names (a bundle entry shares it among its tools):
#: "any session may need it" read as even odds, priced like a pick (README, configuration)
IMPLICIT_CHANCE = 0.5
#: what a task may need without naming it; each phrase's nearest tool is a generic candidate
#: (memory/learning/generic.py: the servers a frontier model's sessions missed, issue 35)
GENERIC_CAPABILITIES = (
    "run code",
    "execute a shell command",
    "read a file",
    "write text to a file",
    "fetch a web page from a URL",
)
#: a generic candidate's chance: the floor of a candidate (USAGE_MIN_CHANCE), a guess from the
#: catalog being the weakest evidence; held where holding is nearly free (latency), on price
#: where it never paid: 0.25 held a fetch tool mcp300's sessions never used (bench/README stop 48)
GENERIC_CHANCE = USAGE_MIN_CHANCE
#: share of a never-seen catalog's needs to name a server (a search that missed) that fall on
#: its generic tools' servers, as a cut menu prices them (memory/core/catalog.py ``guessed``):
#: mcp300 without history, price deciding, 61 of 93 bundle loads (0.66); the issue's frontier
#: sessions over 70 servers, 91 of 99 missed tools from servers the task never named
GENERIC_NEEDS = 0.66
#: MiniLM cosine a phrase's nearest tool needs (a telling match: 0.45-0.8; unrelated 0.1-0.3)
GENERIC_MIN = 0.45
#: ... and its z over the catalog's cosines to the phrase: it stands out, not a crowd's best
GENERIC_Z = 4.0

# ----- near-duplicate tools (memory/retrieval/twins.py; bench/README.md "Catalog lint") ----------
#: z over the catalog's pair cosines that makes a pair a candidate alone: few related pairs (lint)
TWIN_STRONG_Z = 5.0
#: a weaker z that is a candidate with a high cosine or similar names (lint)
TWIN_PAIR_Z = 4.0
#: a cosine that is a candidate outright, for catalogs too small for a distribution (lint)
TWIN_HIGH_COSINE = 0.85
#: name similarity that lets a TWIN_PAIR_Z pair in: renamed copies of one tool (lint)
TWIN_SIMILAR_NAME = 0.7
#: words of a description put to the retriever as a query: longer costs time, not findings (lint)
TWIN_QUERY_WORDS = 40

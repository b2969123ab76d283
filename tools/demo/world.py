"""The pretend world behind the demo tools: a fixed "today", people, documents, list items.

Everything is derived from the call's arguments through a seeded RNG, so the same call always
returns the same result and the demo is reproducible.
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from typing import Any

Args = dict[str, Any]

DEMO_TODAY = date(2026, 11, 2)
STATES = ("shipped", "delivered", "delivered")
PEOPLE = ("Dana Whitfield", "Leo Martins", "Priya Raman", "Marco Rossi", "Sam Okafor", "Ines Costa")


_TOPICS = (
    "agent memory", "tool retrieval", "evaluation", "latency budgets", "prompt caching",
    "data privacy", "observability", "cost control", "open models", "product design",
)  # fmt: skip
_CLAIMS = (
    "Teams that measure {t} early ship fewer regressions.",
    "The main trade-off in {t} is between recall and the size of the prompt.",
    "Most failures attributed to {t} were configuration problems, not model limits.",
    "A small, stable core plus on-demand loading keeps {t} predictable.",
    "The speakers compared three approaches to {t} on the same workload.",
    "Budgets for {t} should be set per conversation, not per request.",
    "Benchmarks of {t} rarely include the long tail that users actually hit.",
)  # fmt: skip


def person(rng: random.Random, query: str = "") -> dict[str, str]:
    """A contact, preferring one whose name matches ``query``."""
    words = query.lower().split()
    hits = [p for p in PEOPLE if any(w in p.lower() for w in words)]
    name = hits[0] if hits else rng.choice(PEOPLE)
    first, last = name.lower().split()
    return {
        "name": name,
        "email": f"{first}.{last}@example.com",
        "phone": f"+1 617 555 {rng.randint(1000, 9999)}",
    }


def long_text(title: str, rng: random.Random, sections: int = 10, agenda: bool = False) -> str:
    """A markdown document of ``sections`` sections, long enough to need compressing.

    With ``agenda`` the sections are conference sessions over three days.
    """
    parts = [f"# {title}", ""]
    shift = rng.randrange(len(_TOPICS))
    for i in range(sections):
        topic = _TOPICS[(i + shift) % len(_TOPICS)]
        head = f"Day {1 + i // 4}, session {1 + i % 4}: " if agenda else f"{i + 1}. "
        parts += [f"## {head}{topic.capitalize()}", ""]
        for _ in range(2):
            picks = rng.sample(_CLAIMS, 3)
            parts += [" ".join(c.format(t=topic) for c in picks), ""]
        who, room = rng.choice(PEOPLE), rng.randint(1, 9)
        parts += [f"- Speaker: {who}", f"- Room {room}, {9 + 2 * (i % 4):02d}:00", ""]
    return "\n".join(parts)


# Item templates for list-like tools. A list picks by item index; an (int, int) tuple draws an
# integer (capped by max_price for price fields); a string is formatted with the arguments plus
# {n} {id} {day} {slug} {person} {email} {phone}; a callable gets (args, rng, index).
ITEMS: dict[str, dict[str, Any]] = {
    "web_search": {
        "title": ["{query}: a practical guide", "{query} explained", "{query}: FAQ"],
        "url": [f"https://{h}.example.com/{{slug}}" for h in ("docs", "news", "wiki")],
        "snippet": "Everything about {query}: answers, examples and recent updates.",
    },
    "web_news_search": {"headline": "{query}: what changed this week ({n})",
                        "source": ["Reuters", "AP", "The Verge"], "date": "{day}"},
    "web_image_search": {"url": "https://img.example.com/{id}.jpg", "width": 1600, "height": 900},
    "travel_search_flights": {
        "offer_id": "off_{id}", "airline": ["TAP Air Portugal", "Delta", "United"],
        "depart": ["{depart_date}T07:05", "{depart_date}T17:30", "{depart_date}T21:45"],
        "stops": lambda a, r, i: min(i % 2, a.get("max_stops", 1)),
        "duration_minutes": (400, 720), "price_usd": (420, 1400),
    },
    "travel_search_hotels": {
        "hotel_id": "htl_{id}", "city": "{city}",
        "name": ["Hotel Miradouro", "Riverside Suites", "Parque Garden Inn"],
        "price_per_night": (95, 320), "rating": [4.6, 4.8, 4.5],
        "amenities": [["wifi", "gym", "breakfast"], ["wifi", "gym", "pool"], ["gym", "spa"]],
    },
    "travel_search_car_rentals": {"offer_id": "car_{id}", "price_per_day": (28, 90),
                                  "car": ["VW Polo", "Toyota RAV4", "Peugeot 308"]},
    "shopping_search_products": {"product_id": "prd_{id}", "name": "{query} ({n})",
                                 "price": (15, 400), "rating": [4.7, 4.3, 4.1], "in_stock": True},
    "shopping_list_orders": {"order_id": "ORD-{id}", "total": (12, 300),
                             "date": lambda a, r, i: day(-6 - 5 * i),
                             "status": lambda a, r, i: _wanted(a, "status", STATES[i]),
                             "items": ["Noise-cancelling headphones", "USB-C cable", "Novel"]},
    "email_search": {"message_id": "msg_{id}", "from": "{email}", "date": "{day}",
                     "subject": ["Re: {query}", "{query} (follow-up)", "Fwd: {query}"]},
    "chat_search_messages": {"message_id": "ts_{id}", "user": "{person}",
                             "text": "About {query}: notes are in the doc."},
    "chat_read_channel": {"message_id": "ts_{id}", "user": "{person}",
                          "text": ["Standup moved to 10:15.", "PR #482 is ready.", "Lunch?"]},
    "chat_list_channels": {"channel": ["#general", "#team-platform", "#random"],
                           "members": (5, 120)},
    "calendar_list_events": {
        "event_id": "evt_{id}", "title": ["Team standup", "1:1 with Dana", "Release planning"],
        "start": ["{start_date}T09:00:00", "{start_date}T11:30:00", "{start_date}T14:00:00"],
        "location": "Room 4B",
    },
    "calendar_find_free_slot": {
        "start": lambda a, r, i: f"{a['window_start'][:10]}T{10 + 2 * i:02d}:00:00",
        "duration_minutes": "{duration_minutes}",
    },
    "contacts_search": {"contact_id": "ct_{id}", "name": "{person}", "email": "{email}",
                        "phone": "{phone}"},
    "documents_search": {"document_id": "doc_{id}", "title": ["{query}", "{query} (draft)",
                         "{query} notes"], "type": "document", "modified": "{day}"},
    "maps_search_places": {"place_id": "plc_{id}", "name": "{query} {n}", "open_now": True,
                           "rating": [4.7, 4.4, 4.2], "distance_m": (80, 1800)},
    "git_log": {"commit": "{id}", "author": "{person}", "date": "{day}",
                "subject": ["Fix flaky timezone test", "Add CSV export", "Bump dependencies"]},
    "memory_recall": {"memory_id": "mem_{id}", "tags": ["preferences"],
                      "content": ["Prefers aisle seats.", "Works in Boston (ET).", "Vegetarian."]},
    "memory_todo_list": {"todo_id": "todo_{id}", "due": "{day}",
                         "task": ["October expense report", "Book Lisbon hotel", "Review PR #482"]},
    "database_list_tables": {"table": ["users", "orders", "events"], "rows": (1000, 900000)},
}  # fmt: skip
ITEMS["memory_list"] = ITEMS["memory_recall"]


class _Context(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return ""


def day(offset: int) -> str:
    """The ISO date ``offset`` days from :data:`DEMO_TODAY`."""
    return (DEMO_TODAY + timedelta(days=offset)).isoformat()


def _wanted(a: Args, key: str, default: str) -> str:
    value = a.get(key, "any")
    return default if value == "any" else str(value)


def fill_item(template: dict[str, Any], a: Args, r: random.Random, i: int) -> dict[str, Any]:
    """Item ``i`` of a list result, from ``template`` (see :data:`ITEMS`)."""
    query = str(a.get("query", ""))
    name = a.get("from") or a.get("author") or a.get("from_user") or query
    who = person(r, str(name) if i == 0 else "")
    ctx = _Context({k: v for k, v in a.items() if isinstance(v, (str, int, float))})
    slug = re.sub(r"\W+", "-", query.lower()).strip("-")
    ctx.update(n=i + 1, id=f"{r.getrandbits(32):08x}", day=day(-2 * i), slug=slug,
               person=who["name"], email=who["email"], phone=who["phone"])  # fmt: skip
    return {key: _fill(key, value, a, r, i, ctx) for key, value in template.items()}


def _fill(key: str, value: Any, a: Args, r: random.Random, i: int, ctx: _Context) -> Any:
    if callable(value):
        return value(a, r, i)
    if isinstance(value, list) and len(value) == 3:
        value = value[i]
    if isinstance(value, tuple):
        top = int(a.get("max_price") or value[1]) if "price" in key else value[1]
        return r.randint(min(value[0], top), top)
    if not isinstance(value, str):
        return value
    whole = re.fullmatch(r"\{(\w+)\}", value)
    return ctx[whole.group(1)] if whole else value.format_map(ctx)

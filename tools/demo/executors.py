"""Simulated implementations of the demo tools, so an agent loop can really execute them.

Results are deterministic: a seeded RNG derived from the tool name and arguments, and a fixed
"today" (``world.DEMO_TODAY``). Math really computes; files act on a small workspace;
list-like tools fill three items from the ``world.ITEMS`` templates; ``web_fetch`` and
``documents_read`` return long documents so result compression can be shown; a few tools have
their own small handler, and everything else gets a generic confirmation. Bad arguments never
raise: the model gets ``{"error": ...}`` saying what was wrong and what to do, the way a real
tool server answers.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from tooltray.tools.demo.catalog import load_demo_catalog
from tooltray.tools.demo.files import FILES
from tooltray.tools.demo.math import MATH
from tooltray.tools.demo.world import ITEMS, day, fill_item, long_text, person
from tooltray.tools.names import did_you_mean
from tooltray.tools.spec import ToolSpec

Args = dict[str, Any]
Handler = Callable[[Args, random.Random], dict[str, Any]]

SKY = ("sunny", "partly cloudy", "cloudy", "light rain", "showers", "windy")
STATUS = {"send": "sent", "reply": "sent", "forward": "sent", "create": "created",
          "update": "updated", "delete": "deleted", "forget": "deleted", "cancel": "cancelled",
          "book": "confirmed", "add": "added", "remove": "removed", "save": "saved",
          "draft": "saved", "share": "shared", "comment": "posted", "checkout": "placed",
          "return": "started", "push": "pushed", "pull": "up to date"}  # fmt: skip


def _rng(*parts: Any) -> random.Random:
    text = json.dumps(parts, sort_keys=True, default=str)
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


def _weather(a: Args, forecast: bool) -> dict[str, Any]:
    place = str(a.get("location") or a.get("region"))
    w = _rng(place.lower())
    temp = w.randint(-2, 30)
    out = {"location": place, "units": "metric", "temperature_c": temp,
           "conditions": w.choice(SKY), "humidity": w.randint(30, 95), "wind_kmh": w.randint(2, 40),
           "aqi": w.randint(10, 140), "uv_index": w.randint(0, 9), "sunrise": "07:21",
           "sunset": "17:24", "alerts": []}  # fmt: skip
    if forecast:
        out["days"] = [
            {"date": day(d), "high_c": temp + w.randint(1, 5), "low_c": temp - w.randint(3, 8),
             "conditions": w.choice(SKY), "rain_chance": w.randint(0, 90)}
            for d in range(a.get("days", 5))
        ]  # fmt: skip
    return out


def _long(a: Args, r: random.Random) -> dict[str, Any]:
    key = a.get("url") or a.get("document_id")
    title = f"Programme {key}" if "document_id" in a else f"Page {key}"
    text = long_text(title, r, agenda="document_id" in a)[: a.get("max_chars")]
    return {"source": key, "title": title, "chars": len(text), "content": text}


def _database(a: Args, r: random.Random) -> dict[str, Any]:
    if "count(" in a["sql"].lower():
        return {"columns": ["count"], "rows": [[r.randint(180, 950)]], "row_count": 1}
    rows = [[i + 1, person(r)["name"], day(-i)] for i in range(3)]
    return {"columns": ["id", "name", "created_at"], "rows": rows, "row_count": 3}


def _plain(fn: Callable[[Args], dict[str, Any]]) -> Handler:
    return lambda a, r: fn(a)


HANDLERS: dict[str, Handler] = {
    **{name: _plain(fn) for name, fn in {**MATH, **FILES}.items()},
    **{f"weather_{n}": lambda a, r: _weather(a, False) for n in
       ("current", "historical", "alerts", "air_quality", "sunrise_sunset", "uv_index")},
    "weather_forecast": lambda a, r: _weather(a, True),
    "web_fetch": _long,
    "documents_read": _long,
    "database_query": _database,
    "git_status": lambda a, r: {"branch": "fix/parse-range", "modified": ["src/dates.py"]},
    "git_diff": lambda a, r: {"diff": "--- a/src/dates.py\n+++ b/src/dates.py\n@@ -9 +9 @@\n"
                              "-    ... range((end - start).days)]\n"
                              "+    ... range((end - start).days + 1)]\n"},
    "shopping_track_order": lambda a, r: {"order_id": a["order_id"], "carrier": "UPS",
        "tracking_number": f"1Z{r.getrandbits(40):010X}", "status": "in transit",
        "last_scan": "Hartford, CT", "expected_delivery": day(r.randint(1, 3))},
    "travel_flight_status": lambda a, r: {"flight": a["flight_number"], "status": "on time",
        "departure": f"{day(0)}T{r.randint(6, 22):02d}:05", "gate": f"E{r.randint(1, 12)}",
        "terminal": "E", "delay_minutes": 0},
    "maps_directions": lambda a, r: {"origin": a["origin"], "destination": a["destination"],
        "mode": a.get("mode", "driving"), "distance_km": round(r.uniform(1.5, 40), 1),
        "duration_minutes": r.randint(6, 75), "steps": ["Head north", "Turn right", "Arrive"]},
    "maps_geocode": lambda a, r: {"address": a["address"], "lat": round(r.uniform(-50, 65), 5),
                                  "lon": round(r.uniform(-120, 150), 5)},
    "maps_timezone": lambda a, r: {"location": a["location"], "local_time": "14:05",
        "timezone": r.choice(("Europe/Lisbon", "America/New_York", "Asia/Tokyo"))},
    "documents_summarize": lambda a, r: {"document_id": a["document_id"], "summary": [
        f"Covers {t}." for t in r.sample(("agent memory", "tool retrieval", "cost control"), 3)]},
    "email_read": lambda a, r: {"message_id": a["message_id"], "from": person(r)["email"],
        "subject": "Re: Q3 budget review", "date": day(-1), "attachments": ["budget-q3.xlsx"],
        "body": "Hi Alex, the updated numbers are attached. Can we go through them on Thursday?"},
    "contacts_get": lambda a, r: {"contact_id": a["contact_id"], **person(r), "company": "Acme"},
    "shopping_product_details": lambda a, r: {"product_id": a["product_id"], "name": "Headphones",
        "price": r.randint(60, 350), "rating": 4.5, "options": {"color": ["black", "silver"]},
        "description": "Over-ear, noise-cancelling, 30 h battery, USB-C."},
    "travel_get_booking": lambda a, r: {"booking_id": a["booking_id"], "type": "hotel",
        "status": "confirmed", "check_in": day(8), "check_out": day(12)},
    "git_commit": lambda a, r: {"commit": f"{r.getrandbits(40):010x}", "branch": "fix/parse-range",
                                "message": a["message"], "files": a.get("files", [])},
}  # fmt: skip


def _generic(name: str, a: Args, r: random.Random) -> dict[str, Any]:
    verb = name.split("_")[1] if "_" in name else name
    echo = {
        k: v for k, v in a.items() if isinstance(v, (str, int, float, list)) and len(str(v)) <= 80
    }
    return {
        "status": STATUS.get(verb, "ok"),
        "id": f"{name.split('_')[0][:3]}_{r.getrandbits(32):08x}",
        **echo,
    }


@lru_cache(maxsize=1)
def _specs() -> dict[str, ToolSpec]:
    return {spec.name: spec for spec in load_demo_catalog()[0]}


def _invalid(spec: ToolSpec, args: Any) -> str | None:
    from jsonschema import Draft202012Validator  # 30 ms: only when a demo tool runs
    from jsonschema.exceptions import best_match

    if not isinstance(args, dict):
        return f"arguments for {spec.name} must be a JSON object, got {type(args).__name__}."
    error = best_match(Draft202012Validator(spec.parameters).iter_errors(args))
    if error is None:
        return None
    where = "/".join(map(str, error.absolute_path)) or "arguments"
    required = spec.parameters.get("required", [])
    return (f"invalid arguments for {spec.name}: {error.message} (at {where}). "
            f"Call it again with arguments matching its schema; required: {required}.")  # fmt: skip


def execute_demo_tool(name: str, args: dict[str, Any]) -> str:
    """Run demo tool ``name`` on ``args`` and return a compact JSON result; never raises.

    Unknown tools, arguments that break the tool's schema, and inputs the tool cannot handle
    (a division by zero, a missing file) return ``{"error": "..."}`` saying what to do instead.
    """
    spec = _specs().get(name)
    if spec is None:
        hint = ", ".join(did_you_mean(name, _specs())) or "none; call load_tools to find one"
        return _dump({"error": f"no demo tool named {name!r}; did you mean: {hint}?"})
    problem = _invalid(spec, args)
    if problem:
        return _dump({"error": problem})
    r = _rng(name, args)
    try:
        if name in ITEMS:
            return _dump({"results": [fill_item(ITEMS[name], args, r, i) for i in range(3)]})
        handler = HANDLERS.get(name)
        return _dump(handler(args, r) if handler else _generic(name, args, r))
    except (ValueError, ArithmeticError, TypeError, re.error) as exc:
        return _dump({"error": f"{name} failed: {exc}"})


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

"""The demo catalog's math tools, computed for real (a safe expression evaluator, no ``eval``).

Results must be right: the demo shows a model delegating arithmetic, so a plausible-looking
wrong number would teach the wrong lesson. Bad input raises ``ValueError`` with the fix; the
caller turns it into a JSON error for the model.
"""

from __future__ import annotations

import ast
import math
import operator
import statistics
from collections.abc import Callable
from functools import reduce
from typing import Any

Args = dict[str, Any]
MAX_POWER = 10_000

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
_NAMES: dict[str, Any] = {"pi": math.pi, "e": math.e, "tau": math.tau}
_FUNCS: dict[str, Callable[..., Any]] = {
    **{f: getattr(math, f) for f in ("sqrt", "log", "log10", "log2", "exp", "sin", "cos", "tan")},
    **{"floor": math.floor, "ceil": math.ceil, "factorial": math.factorial},
    **{"abs": abs, "round": round, "min": min, "max": max},
}

_LINEAR: dict[str, float] = {
    "mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "yd": 0.9144,
    "mi": 1609.344, "g": 0.001, "kg": 1.0, "oz": 0.028349523125, "lb": 0.45359237, "ml": 0.001,
    "l": 1.0, "gal": 3.785411784, "cup": 0.2365882365, "mps": 1.0, "kmh": 1 / 3.6, "mph": 0.44704,
}  # fmt: skip
_DIMENSION = {
    **dict.fromkeys(("mm", "cm", "m", "km", "in", "ft", "yd", "mi"), "length"),
    **dict.fromkeys(("g", "kg", "oz", "lb"), "mass"),
    **dict.fromkeys(("ml", "l", "gal", "cup"), "volume"),
    **dict.fromkeys(("mps", "kmh", "mph"), "speed"),
}
_TO_KELVIN: dict[str, Callable[[float], float]] = {
    "c": lambda v: v + 273.15, "f": lambda v: (v - 32) * 5 / 9 + 273.15, "k": lambda v: v,
}  # fmt: skip
_FROM_KELVIN: dict[str, Callable[[float], float]] = {
    "c": lambda v: v - 273.15, "f": lambda v: (v - 273.15) * 9 / 5 + 32, "k": lambda v: v,
}  # fmt: skip
USD_PER: dict[str, float] = {
    "USD": 1.0, "EUR": 1.08, "GBP": 1.27, "JPY": 0.0067, "CHF": 1.12, "CAD": 0.73, "AUD": 0.66,
    "INR": 0.012, "CNY": 0.138, "BRL": 0.18, "MXN": 0.055, "SEK": 0.095,
}  # fmt: skip


def evaluate(expression: str, names: dict[str, float] | None = None) -> float | int:
    """Evaluate an arithmetic expression over numbers, constants and whitelisted functions."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"cannot parse {expression!r}; write e.g. '(2 + 3) * 4'.") from None
    value: float | int = _node(tree.body, {**_NAMES, **(names or {})})
    return value


def _node(node: ast.AST, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_node(node.operand, names))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _node(node.left, names), _node(node.right, names)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_POWER:
            raise ValueError(f"exponent {right} is too large (limit {MAX_POWER}).")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
        if node.keywords:
            raise ValueError(f"{node.func.id}() takes positional arguments only.")
        return _FUNCS[node.func.id](*(_node(a, names) for a in node.args))
    shown = ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__
    raise ValueError(
        f"unsupported element {shown!r}: use numbers, + - * / // % **, parentheses, "
        f"constants {sorted(_NAMES)} and functions {sorted(_FUNCS)}."
    )


def _clean(value: float) -> float | int:
    rounded = round(value, 10)
    return int(rounded) if float(rounded).is_integer() and abs(rounded) < 2**53 else rounded


def m_evaluate(a: Args) -> dict[str, Any]:
    return {"expression": a["expression"], "result": _clean(evaluate(a["expression"]))}


def m_statistics(a: Args) -> dict[str, Any]:
    values = [float(v) for v in a["values"]]
    funcs: dict[str, Callable[[list[float]], float]] = {
        "count": len, "sum": math.fsum, "mean": statistics.fmean, "median": statistics.median,
        "stdev": lambda v: statistics.stdev(v) if len(v) > 1 else 0.0, "min": min, "max": max,
    }  # fmt: skip
    wanted = a.get("measures") or list(funcs)
    return {m: _clean(funcs[m](values)) for m in wanted}


def _convert(value: float, src: str, dst: str) -> float:
    if src in _TO_KELVIN and dst in _FROM_KELVIN:
        return _FROM_KELVIN[dst](_TO_KELVIN[src](value))
    if src not in _LINEAR or dst not in _LINEAR:
        known = sorted(set(_LINEAR) | set(_TO_KELVIN))
        raise ValueError(
            f"unknown unit {src if src not in _LINEAR else dst!r}; use one of {known}."
        )
    if _DIMENSION[src] != _DIMENSION[dst]:
        raise ValueError(f"cannot convert {_DIMENSION[src]} ({src}) to {_DIMENSION[dst]} ({dst}).")
    return value * _LINEAR[src] / _LINEAR[dst]


def m_convert_units(a: Args) -> dict[str, Any]:
    src, dst = a["from_unit"].strip().lower(), a["to_unit"].strip().lower()
    result = _clean(round(_convert(float(a["value"]), src, dst), 6))
    return {"value": a["value"], "from_unit": src, "to_unit": dst, "result": result}


def m_currency(a: Args) -> dict[str, Any]:
    src, dst = a["from_currency"].upper(), a["to_currency"].upper()
    for code in (src, dst):
        if code not in USD_PER:
            raise ValueError(f"no rate for {code!r}; supported: {sorted(USD_PER)}.")
    rate = USD_PER[src] / USD_PER[dst]
    return {"amount": a["amount"], "from": src, "to": dst, "rate": round(rate, 6),
            "result": round(float(a["amount"]) * rate, 2)}  # fmt: skip


def m_solve(a: Args) -> dict[str, Any]:
    var, equation = a.get("variable", "x"), a["equation"]
    if equation.count("=") != 1:
        raise ValueError("the equation needs exactly one '=', e.g. '3*x + 5 = 20'.")
    lhs, rhs = equation.split("=")

    def f(x: float) -> float:
        return float(evaluate(lhs, {var: x}) - evaluate(rhs, {var: x}))

    f0, f1, f2 = f(0.0), f(1.0), f(2.0)
    if not math.isclose(f2 - f1, f1 - f0, rel_tol=1e-9, abs_tol=1e-9):
        raise ValueError(f"only linear equations in {var!r} are supported.")
    if math.isclose(f1, f0, abs_tol=1e-12):
        raise ValueError("no unique solution: the variable cancels out.")
    return {"equation": equation, "variable": var, "solution": _clean(-f0 / (f1 - f0))}


def m_percentage_change(a: Args) -> dict[str, Any]:
    old, new = float(a["old"]), float(a["new"])
    if old == 0:
        raise ValueError("'old' must not be zero: a change from zero has no percentage.")
    return {
        "old": a["old"],
        "new": a["new"],
        "percent_change": round((new - old) / abs(old) * 100, 4),
    }


def m_compound(a: Args) -> dict[str, Any]:
    p, r, n = (
        float(a["principal"]),
        float(a["annual_rate"]) / 100,
        int(a.get("compounds_per_year", 12)),
    )
    value = p * (1 + r / n) ** (n * float(a["years"]))
    return {"future_value": round(value, 2), "interest_earned": round(value - p, 2)}


def m_loan(a: Args) -> dict[str, Any]:
    p, months, r = float(a["principal"]), int(a["months"]), float(a["annual_rate"]) / 1200
    payment = p / months if r == 0 else p * r / (1 - (1 + r) ** -months)
    total = payment * months
    return {"monthly_payment": round(payment, 2), "total_paid": round(total, 2),
            "total_interest": round(total - p, 2)}  # fmt: skip


def m_matrix(a: Args) -> dict[str, Any]:
    left, right = a["a"], a["b"]
    widths = {len(r) for r in left} | {len(right)}
    if len(widths) != 1 or len({len(r) for r in right}) != 1:
        raise ValueError("a must be m x n and b n x p with equal-length rows.")
    cols = list(zip(*right, strict=True))
    product = [
        [_clean(math.fsum(x * y for x, y in zip(r, c, strict=True))) for c in cols] for r in left
    ]
    return {"result": product, "shape": [len(product), len(cols)]}


def m_gcd_lcm(a: Args) -> dict[str, Any]:
    nums = [int(n) for n in a["numbers"]]
    lcm = reduce(lambda x, y: abs(x * y) // math.gcd(x, y) if x and y else 0, nums)
    return {"numbers": nums, "gcd": reduce(math.gcd, nums), "lcm": lcm}


MATH: dict[str, Callable[[Args], dict[str, Any]]] = {
    "math_evaluate": m_evaluate,
    "math_statistics": m_statistics,
    "math_convert_units": m_convert_units,
    "math_currency_convert": m_currency,
    "math_solve_equation": m_solve,
    "math_percentage_change": m_percentage_change,
    "math_compound_interest": m_compound,
    "math_loan_payment": m_loan,
    "math_matrix_multiply": m_matrix,
    "math_gcd_lcm": m_gcd_lcm,
}

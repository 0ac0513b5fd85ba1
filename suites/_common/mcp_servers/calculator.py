"""Calculator: the ``calculate(expression)`` tool MCP-Universe pairs with its finance server
(upstream: PyPI ``mcp_server_calculator``).

Evaluates one arithmetic expression safely (a Python AST walk, never ``eval``): numbers,
``+ - * / // % **``, unary signs, parentheses, and the functions ``abs, round, min, max, sqrt,
log, log10, exp, pow, floor, ceil``. The result is the number as text (``"12.5"``); an
integral float is shown without ``.0``. A malformed expression, an unknown name, division by
zero or an oversized power is the model's mistake (an error result).
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

from suites._common.mcp_servers._base import BadRequest, make_server

__all__ = ["build_server", "calculate"]

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "pow": math.pow,
    "floor": math.floor,
    "ceil": math.ceil,
}
_MAX_EXPONENT = 1000


def _eval(node: ast.AST) -> float | int:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
            raise BadRequest(f"exponent {right} is too large (at most {_MAX_EXPONENT})")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fn = _FUNCTIONS.get(node.func.id)
        if fn is None:
            raise BadRequest(f"unknown function {node.func.id!r}; available: {', '.join(sorted(_FUNCTIONS))}")
        return fn(*[_eval(a) for a in node.args])
    if isinstance(node, ast.Name):
        raise BadRequest(f"unknown name {node.id!r}: only numbers, operators and functions are allowed")
    raise BadRequest(
        f"unsupported syntax: {ast.unparse(node) if hasattr(ast, 'unparse') else type(node).__name__}"
    )


def calculate(expression: str) -> str:
    """The value of ``expression`` as text; :class:`BadRequest` when it cannot be computed."""
    text = str(expression).strip()
    if not text:
        raise BadRequest("expression is empty")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise BadRequest(f"cannot parse {text!r}: {exc.msg}") from None
    try:
        value = _eval(tree)
    except ZeroDivisionError:
        raise BadRequest("division by zero") from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise BadRequest(f"cannot compute {text!r}: {exc}") from None
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def build_server(seed: int = 0) -> Any:
    """Calculator MCP server (the seed is accepted for a uniform command line; unused)."""

    def calculate_tool(expression: str) -> str:
        """Calculates/evaluates the given mathematical expression.

        Args:
            expression: The expression to evaluate, e.g. "(1250.5 - 1100) / 1100 * 100"
        """
        return calculate(expression)

    calculate_tool.__name__ = "calculate"
    return make_server("calculator", "Evaluate arithmetic expressions.", [(calculate_tool, False)])


if __name__ == "__main__":
    from suites._common.mcp_servers._base import main

    main(build_server)

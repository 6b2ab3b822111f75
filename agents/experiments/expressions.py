"""Safe expressions over an agent's status (`income < 2000`, `0.5 * mood + currency / 3000`).

Parsed with `ast` and checked against a whitelist (numbers, strings, names, arithmetic,
comparisons, `and`/`or`/`not`, `x if c else y`, `min`/`max`/`abs`/`round`); evaluated by
walking the tree, never by `eval`, so a scenario file cannot run code.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_BIN: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMP: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_FUNCS: dict[str, Callable[..., Any]] = {"min": min, "max": max, "abs": abs, "round": round}
MAX_LENGTH = 500
MAX_POWER = 64


class ExpressionError(ValueError):
    """An expression that does not parse, uses what is not allowed, or fails on a value."""


@dataclass(frozen=True)
class Expression:
    """A checked expression: its text, its tree and the status names it reads."""

    text: str
    tree: ast.expr
    names: frozenset[str]

    def __call__(self, values: Mapping[str, Any]) -> Any:
        """The expression's value for one agent's `values` (name -> value)."""
        return _eval(self.tree, values)


def parse_expression(text: str) -> Expression:
    """Check `text` and return it parsed; ExpressionError says what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("an expression must be a non-empty string")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"an expression is at most {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as err:
        raise ExpressionError(f"{text!r} does not parse ({err.msg})") from None
    names: set[str] = set()
    _check(tree, names, text)
    return Expression(text=text, tree=tree, names=frozenset(names))


def _check(node: ast.AST, names: set[str], text: str) -> None:
    """Refuse every node outside the whitelist; collect the names read."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool | int | float | str):
            return
    elif isinstance(node, ast.Name):
        if node.id in _FUNCS:
            raise ExpressionError(f"{text!r}: {node.id} is a function, call it as {node.id}(...)")
        names.add(node.id)
        return
    elif isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        _check(node.left, names, text)
        _check(node.right, names, text)
        return
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
        _check(node.operand, names, text)
        return
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            _check(value, names, text)
        return
    elif isinstance(node, ast.Compare) and all(type(op) in _CMP for op in node.ops):
        for part in (node.left, *node.comparators):
            _check(part, names, text)
        return
    elif isinstance(node, ast.IfExp):
        for part in (node.test, node.body, node.orelse):
            _check(part, names, text)
        return
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and not node.keywords
        and node.args
    ):
        for arg in node.args:
            _check(arg, names, text)
        return
    what = ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__
    raise ExpressionError(
        f"{text!r}: {what!r} is not allowed (numbers, names, + - * / // % **, comparisons, "
        "and/or/not, x if c else y, min/max/abs/round)"
    )


def _eval(node: ast.expr, values: Mapping[str, Any]) -> Any:
    """The value of a checked node."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        try:
            return values[node.id]
        except KeyError:
            raise ExpressionError(f"unknown name {node.id!r}") from None
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, values), _eval(node.right, values)
        if isinstance(node.op, ast.Pow) and abs(_number(right)) > MAX_POWER:
            raise ExpressionError(f"exponent {right!r} is larger than {MAX_POWER}")
        try:
            return _BIN[type(node.op)](left, right)
        except ZeroDivisionError:
            return math.nan
        except TypeError as err:
            raise ExpressionError(str(err)) from None
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, values)
        if isinstance(node.op, ast.Not):
            return not operand
        return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            result: Any = True
            for value in node.values:
                result = _eval(value, values)
                if not result:
                    return result
            return result
        result = False
        for value in node.values:
            result = _eval(value, values)
            if result:
                return result
        return result
    if isinstance(node, ast.Compare):
        left = _eval(node.left, values)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, values)
            try:
                if not _CMP[type(op)](left, right):
                    return False
            except TypeError as err:
                raise ExpressionError(str(err)) from None
            left = right
        return True
    if isinstance(node, ast.IfExp):
        chosen = node.body if _eval(node.test, values) else node.orelse
        return _eval(chosen, values)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        args = [_eval(a, values) for a in node.args]
        try:
            return _FUNCS[node.func.id](*args)
        except TypeError as err:
            raise ExpressionError(str(err)) from None
    raise ExpressionError(f"{ast.unparse(node)!r} is not allowed")


def _number(value: Any) -> float:
    if isinstance(value, bool | int | float):
        return float(value)
    raise ExpressionError(f"{value!r} is not a number")

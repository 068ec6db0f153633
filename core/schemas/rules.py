"""Rule expressions: the small, safe language a schema's cross-field checks are
written in, parsed once at compile time and evaluated on each record.

    subtotal + tax = total
    sum(line_items[].amount) = subtotal
    line_items[].quantity * line_items[].unit_price = line_items[].amount   (each item)
    opening_balance + sum(transactions[].amount) = closing_balance
    due_date >= invoice_date
    0 <= tax_rate <= 1

Python's own parser reads the expression (after `[]` becomes an attribute step and a
lone `=` becomes `==`); only the node types below are accepted, so nothing in a schema
is ever executed. Paths are written as templates: `line_items[].amount` is the amount
of every item; `[]` outside `sum()` makes the rule hold for each item on its own.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

__all__ = [
    "EACH",
    "Comparison",
    "Expr",
    "Neg",
    "Num",
    "Op",
    "PathRef",
    "RuleSyntaxError",
    "SumOf",
    "concrete",
    "evaluate",
    "parse_rule",
    "paths_in",
    "render",
]

EACH = "[]"
_EACH_ATTR = "__each__"
_COMPARATORS = {ast.Eq: "=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_LONE_EQUALS = re.compile(r"(?<![<>=!])=(?!=)")
_EACH_RE = re.compile(r"\[\s*\]")


class RuleSyntaxError(ValueError):
    """A rule that cannot be read; the message says where."""


@dataclass(frozen=True)
class PathRef:
    template: str  # "line_items[].amount"


@dataclass(frozen=True)
class Num:
    value: Decimal


@dataclass(frozen=True)
class SumOf:
    template: str  # a path with at least one []: every value it reaches, added


@dataclass(frozen=True)
class Op:
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Neg:
    operand: Expr


Expr = PathRef | Num | SumOf | Op | Neg


@dataclass(frozen=True)
class Comparison:
    """`sides[0] ops[0] sides[1] ops[1] sides[2] ...`: an equation (one `=`) or an
    order (a chain of <, <=, >, >=)."""

    text: str
    sides: tuple[Expr, ...]
    ops: tuple[str, ...]

    @property
    def is_equation(self) -> bool:
        return self.ops == ("=",)


def parse_rule(text: str) -> Comparison:
    prepared = _EACH_RE.sub(
        "." + _EACH_ATTR, text.replace("×", "*").replace("−", "-").replace("≤", "<=").replace("≥", ">=")
    )
    prepared = _LONE_EQUALS.sub("==", prepared)
    try:
        tree = ast.parse(prepared.strip(), mode="eval")
    except SyntaxError as exc:
        raise RuleSyntaxError(f"cannot read {text!r}: {exc.msg}") from None
    node = tree.body
    if not isinstance(node, ast.Compare):
        raise RuleSyntaxError(f"{text!r} compares nothing: write it as `a = b`, `a <= b` or `a <= b <= c`")
    ops = []
    for op in node.ops:
        spelled = _COMPARATORS.get(type(op))
        if spelled is None:
            raise RuleSyntaxError(f"{text!r}: only =, <, <=, > and >= compare")
        ops.append(spelled)
    if "=" in ops and len(ops) > 1:
        raise RuleSyntaxError(f"{text!r}: an equation compares exactly two sides")
    sides = tuple(_expr(n, text) for n in (node.left, *node.comparators))
    return Comparison(text=text.strip(), sides=sides, ops=tuple(ops))


def _expr(node: ast.AST, text: str) -> Expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Num(Decimal(repr(node.value)) if isinstance(node.value, float) else Decimal(node.value))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return Op(_OPERATORS[type(node.op)], _expr(node.left, text), _expr(node.right, text))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _expr(node.operand, text)
        return Neg(operand) if isinstance(node.op, ast.USub) else operand
    if isinstance(node, (ast.Name, ast.Attribute)):
        return PathRef(_path(node, text))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sum":
        if len(node.args) != 1 or node.keywords:
            raise RuleSyntaxError(f"{text!r}: sum() takes one path, such as sum(line_items[].amount)")
        arg = node.args[0]
        if not isinstance(arg, (ast.Name, ast.Attribute)):
            raise RuleSyntaxError(f"{text!r}: sum() takes one path, such as sum(line_items[].amount)")
        path = _path(arg, text)
        if EACH not in path:
            raise RuleSyntaxError(
                f"{text!r}: sum({path}) adds nothing up: name a list's field, as in sum(items[].amount)"
            )
        return SumOf(path)
    raise RuleSyntaxError(f"{text!r}: only field paths, numbers, + - * /, parentheses and sum() may appear")


def _path(node: ast.AST, text: str) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise RuleSyntaxError(f"{text!r}: a path is field names joined by dots, with [] after a list")
    parts.append(node.id)
    spelled = ""
    for part in reversed(parts):
        if part == _EACH_ATTR:
            if not spelled:
                raise RuleSyntaxError(f"{text!r}: [] follows a list field's name")
            spelled += EACH
        else:
            spelled += ("." if spelled else "") + part
    return spelled


def paths_in(expr: Expr, *, inside_sum: bool = False) -> Iterator[tuple[str, bool]]:
    """Every path an expression reads, with whether it stands inside a sum()."""
    if isinstance(expr, PathRef):
        yield expr.template, inside_sum
    elif isinstance(expr, SumOf):
        yield expr.template, True
    elif isinstance(expr, Op):
        yield from paths_in(expr.left, inside_sum=inside_sum)
        yield from paths_in(expr.right, inside_sum=inside_sum)
    elif isinstance(expr, Neg):
        yield from paths_in(expr.operand, inside_sum=inside_sum)


def concrete(template: str, index: int, scope: str) -> str:
    """The template with the list `scope` (e.g. "line_items[]") pinned to one item."""
    if template.startswith(scope):
        return f"{scope[: -len(EACH)]}[{index}]{template[len(scope) :]}"
    return template


Value = Decimal | date


def evaluate(
    expr: Expr, value_of: Callable[[str], Value | None], sum_of: Callable[[str], Decimal | None]
) -> Value | None:
    """The expression's value, or None when a value it needs is missing (the rule then
    cannot be checked: an honest null never fails a rule)."""
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, PathRef):
        return value_of(expr.template)
    if isinstance(expr, SumOf):
        return sum_of(expr.template)
    if isinstance(expr, Neg):
        inner = evaluate(expr.operand, value_of, sum_of)
        return -inner if isinstance(inner, Decimal) else None
    left = evaluate(expr.left, value_of, sum_of)
    right = evaluate(expr.right, value_of, sum_of)
    if not isinstance(left, Decimal) or not isinstance(right, Decimal):
        return None
    try:
        if expr.op == "+":
            return left + right
        if expr.op == "-":
            return left - right
        if expr.op == "*":
            return left * right
        return left / right if right else None
    except (InvalidOperation, ArithmeticError):
        return None


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def render(expr: Expr, value_of: Callable[[str], str] | None = None) -> str:
    """The expression as written (paths), or with each path's value shown."""
    if isinstance(expr, Num):
        return format(expr.value.normalize(), "f")
    if isinstance(expr, PathRef):
        return value_of(expr.template) if value_of is not None else expr.template
    if isinstance(expr, SumOf):
        return value_of(f"sum({expr.template})") if value_of is not None else f"sum({expr.template})"
    if isinstance(expr, Neg):
        inner = render(expr.operand, value_of)
        return f"-({inner})" if isinstance(expr.operand, Op) else f"-{inner}"
    left, right = render(expr.left, value_of), render(expr.right, value_of)
    mine = _PRECEDENCE[expr.op]
    if isinstance(expr.left, Op) and _PRECEDENCE[expr.left.op] < mine:
        left = f"({left})"
    if isinstance(expr.right, Op) and (
        _PRECEDENCE[expr.right.op] < mine or (_PRECEDENCE[expr.right.op] == mine and expr.op in "-/")
    ):
        right = f"({right})"
    return f"{left} {expr.op} {right}"

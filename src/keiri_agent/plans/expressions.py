"""Conditions for ``when`` and ``while`` (seed 002 §5.1): a small typed grammar, no eval.

    condition  := or
    or         := and ("or" and)*
    and        := not ("and" not)*
    not        := "not" not | comparison
    comparison := operand (("==" | "!=" | ">" | ">=" | "<" | "<=") operand)?
    operand    := literal | reference | "(" condition ")"
    literal    := number | 'text' | "text" | true | false | null
    reference  := ${...}   (see plans.references)

Bounded: text length, nesting depth and literal size are limited; anything else
(``__import__``, attribute access, ``**``, calls) is a syntax error with a position.

CONTRACT (implementation owned by the references/expressions work; signatures are fixed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from keiri_agent.errors import UserInputError
from keiri_agent.plans.models import Condition
from keiri_agent.plans.references import Reference, Resolver

MAX_EXPRESSION_LENGTH = 2000
MAX_DEPTH = 32


class ConditionSyntaxError(UserInputError):
    """A condition that does not parse; ``position`` is the 0-based character offset."""

    code = "CONDITION_SYNTAX"

    def __init__(self, message: str, *, text: str, position: int) -> None:
        super().__init__(
            f"{message} at position {position}: {text[max(0, position - 20) : position + 20]!r}",
            hint="conditions use ${...} references, literals, ==, !=, >, >=, <, <=, and, or, not",
            details={"position": position, "expression": text[:200]},
        )
        self.position = position


@dataclass(frozen=True)
class ParsedCondition:
    """A parsed condition: evaluate it with a resolver; ``references`` lists what it reads."""

    source: str
    tree: Any
    references: tuple[Reference, ...]

    def evaluate(self, resolver: Resolver) -> bool:
        """Truth value; comparisons of incompatible types raise ConditionSyntaxError-free
        ``UserInputError`` naming both values (never a silent False)."""
        raise NotImplementedError


def parse_condition(text: str) -> ParsedCondition:
    """Parse an ``expr`` string; ConditionSyntaxError on anything outside the grammar."""
    raise NotImplementedError


def parse_when(condition: Condition) -> ParsedCondition:
    """A ``when``/``while`` condition (``{expr}`` or ``{left, op, right}``) parsed."""
    raise NotImplementedError

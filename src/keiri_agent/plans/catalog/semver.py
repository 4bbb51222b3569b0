"""SemVer versions and npm-style ranges for block references (seed 002 §4, §13).

Ranges (``id@<range>``)::

    *  (or x, or empty)   any release
    1.2.3                 exactly 1.2.3          (=1.2.3 and ==1.2.3 too)
    1.2  /  1.2.x         >=1.2.0, <1.3.0
    1    /  1.x           >=1.0.0, <2.0.0
    ^1.2.3                >=1.2.3, <2.0.0        (^0.2.3: <0.3.0; ^0.0.3: <0.0.4)
    ^0.2                  >=0.2.0, <0.3.0
    ~1.2.3  /  ~1.2       >=1.2.x, <1.3.0        (~1: <2.0.0)
    >=1.0,<2              comparisons joined by "," or spaces (all must hold)
    >=1 <2 || ^3          alternatives

Partial versions in comparisons follow npm: ``<=1.2`` is ``<1.3.0``, ``>1.2`` is
``>=1.3.0``. A pre-release (``1.3.0-rc.1``) only matches a range that names a
pre-release of the same ``MAJOR.MINOR.PATCH``. Build metadata is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

_VERSION = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)
_PARTIAL = re.compile(
    r"^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)
_COMPARATOR = re.compile(r"^(>=|<=|==|=|>|<|\^|~)?\s*(.*)$")
_WILDCARDS = {"x", "X", "*"}


@total_ordering
@dataclass(frozen=True)
class Version:
    """A SemVer 2.0 version; ordering follows SemVer precedence (build ignored)."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[int | str, ...] = ()
    build: str = ""

    @classmethod
    def parse(cls, text: str) -> Version:
        """Parse ``MAJOR.MINOR.PATCH[-pre][+build]``; ValueError when it is not SemVer."""
        match = _VERSION.match(text.strip()) if isinstance(text, str) else None
        if match is None:
            raise ValueError(
                f"{text!r} はバージョンの形（メジャー.マイナー.パッチ、例: 1.0.0）ではありません"
            )
        major, minor, patch, pre, build = match.groups()
        return cls(int(major), int(minor), int(patch), _split_prerelease(pre), build or "")

    @property
    def core(self) -> tuple[int, int, int]:
        """``(major, minor, patch)``."""
        return (self.major, self.minor, self.patch)

    def _key(self) -> tuple[tuple[int, int, int], int, tuple[tuple[int, int | str], ...]]:
        # A release sorts after its pre-releases; numeric identifiers before alphanumeric.
        identifiers = tuple((0, p) if isinstance(p, int) else (1, p) for p in self.prerelease)
        return (self.core, 0 if self.prerelease else 1, identifiers)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(str(p) for p in self.prerelease)
        return text + (f"+{self.build}" if self.build else "")


def _split_prerelease(text: str | None) -> tuple[int | str, ...]:
    if not text:
        return ()
    return tuple(
        int(part) if part.isascii() and part.isdigit() else part for part in text.split(".")
    )


@dataclass(frozen=True)
class _Bound:
    op: str  # one of >=, >, <, <=, ==
    version: Version

    def allows(self, version: Version) -> bool:
        if self.op == "==":
            return version == self.version
        if self.op == ">=":
            return version >= self.version
        if self.op == ">":
            return version > self.version
        if self.op == "<":
            return version < self.version
        return version <= self.version


@dataclass(frozen=True)
class VersionRange:
    """A parsed range: alternatives (``||``), each a set of bounds that must all hold."""

    text: str
    alternatives: tuple[tuple[_Bound, ...], ...]

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        """Parse a range (see the module docstring); ValueError naming the bad part."""
        alternatives = []
        for alternative in text.split("||"):
            bounds: list[_Bound] = []
            for part in _comparator_parts(alternative):
                bounds.extend(_parse_comparator(part, text))
            alternatives.append(tuple(bounds))
        return cls(text, tuple(alternatives))

    def allows(self, version: Version) -> bool:
        """True when ``version`` satisfies the range (pre-releases: see the module doc)."""
        for bounds in self.alternatives:
            if not all(bound.allows(version) for bound in bounds):
                continue
            if not version.prerelease or any(
                bound.version.prerelease and bound.version.core == version.core for bound in bounds
            ):
                return True
        return False

    def __str__(self) -> str:
        return self.text


def _comparator_parts(text: str) -> list[str]:
    # "1.0 - 2" style hyphen ranges are not supported; ">= 1.0" (space after op) is.
    tokens = [t for t in re.split(r"[,\s]+", text.strip()) if t]
    parts: list[str] = []
    for token in tokens:
        if parts and parts[-1] in {">=", "<=", "==", "=", ">", "<", "^", "~"}:
            parts[-1] += token
        else:
            parts.append(token)
    return parts or ["*"]


def _parse_comparator(part: str, whole: str) -> list[_Bound]:
    match = _COMPARATOR.match(part)
    assert match is not None  # the pattern accepts any text
    op, rest = match.group(1) or "", match.group(2)
    partial = _PARTIAL.match(rest)
    if partial is None:
        raise ValueError(
            f"バージョンの範囲 {whole!r} に誤りがあります: {part!r} はバージョンではありません"
            "（1.2.3、^1.2、~1.2.3、>=1.0,<2、* のように書いてください）"
        )
    numbers: list[int] = []
    groups = [g for g in partial.groups()[:3] if g is not None]
    for index, group in enumerate(groups):
        if group in _WILDCARDS:
            if any(later not in _WILDCARDS for later in groups[index:]):
                raise ValueError(
                    f"バージョンの範囲 {whole!r} に誤りがあります: {part!r} で x の後に数があります"
                )
            break
        numbers.append(int(group))
    pre = _split_prerelease(partial.group(4)) if len(numbers) == 3 else ()
    if partial.group(4) and len(numbers) < 3:
        raise ValueError(
            f"バージョンの範囲 {whole!r} に誤りがあります:"
            " プレリリースにはメジャー.マイナー.パッチの 3 つが必要です"
        )
    return _bounds(op, numbers, pre)


def _bounds(op: str, numbers: list[int], pre: tuple[int | str, ...]) -> list[_Bound]:
    padded = [*numbers, 0, 0, 0][:3]
    low = Version(padded[0], padded[1], padded[2], pre)
    if not numbers:  # "*", ">=*", ...
        return [] if op not in {"<", ">"} else [_Bound("<", Version(0, 0, 0, (0,)))]
    if op in {"", "=", "=="}:
        if len(numbers) == 3:
            return [_Bound("==", low)]
        return [_Bound(">=", low), _Bound("<", _bump(numbers, len(numbers) - 1))]
    if op == "^":
        # Bump the first non-zero component among those given (npm semantics).
        index = next((i for i, n in enumerate(numbers) if n != 0), len(numbers) - 1)
        return [_Bound(">=", low), _Bound("<", _bump(numbers, index))]
    if op == "~":
        index = 0 if len(numbers) == 1 else 1
        return [_Bound(">=", low), _Bound("<", _bump(numbers, index))]
    if len(numbers) == 3:
        return [_Bound(op, low)]
    upper = _bump(numbers, len(numbers) - 1)
    if op == ">=":
        return [_Bound(">=", low)]
    if op == "<":
        return [_Bound("<", low)]
    if op == "<=":
        return [_Bound("<", upper)]
    return [_Bound(">=", upper)]  # ">"


def _bump(numbers: list[int], index: int) -> Version:
    """The smallest release above every version whose first ``index+1`` parts are given."""
    parts = [*numbers, 0, 0, 0][:3]
    parts[index] += 1
    for later in range(index + 1, 3):
        parts[later] = 0
    return Version(parts[0], parts[1], parts[2], (0,))


def is_semver(text: object) -> bool:
    """True when ``text`` is a full SemVer version string."""
    return isinstance(text, str) and _VERSION.match(text) is not None

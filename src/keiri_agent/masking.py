"""Secrets masking (seed 002 §12): what no output, log, state or error ever shows.

Values under secret-looking mapping keys (``SECRET_KEY``: API keys, passwords,
tokens, personal and bank numbers) become ``***``; text that looks like a key
(``SECRET_VALUE``: ``sk-...``, ``Bearer ...``, ``AKIA...``) is masked wherever it
appears; values registered with ``register_secret`` (every secret of ``Settings``,
whatever its shape) are masked literally, in the run state too; and the values of a
Plan's secret vars (``register_value_secret``) are masked literally in everything
shown, but kept in the run state so that the run can be resumed.

Used by every channel: LLM errors (``llm.structured``), ``--json`` forms
(``services.jsonforms``), the Plan run log, run states and errors.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # pydantic loads with the settings, not with every CLI command
    from pydantic import SecretStr

SECRET_KEY = re.compile(
    r"api[_-]?key|apikey|password|passwd|passphrase|secret|token(?!s)|authorization|credential"
    r"|private[_-]?key|my[_-]?number|bank[_-]?account|card[_-]?number"
    r"|パスワード|暗証番号|マイナンバー|個人番号|口座番号|カード番号",
    re.IGNORECASE,
)
"""Mapping keys whose values are never logged (credentials and personal numbers, §12).

``token`` but not ``tokens``: ``access_token`` is a secret, ``total_tokens`` a count."""
SECRET_VALUE = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{16,}|\bBearer\s+[A-Za-z0-9._~+/\-]{8,}=*|\bAKIA[0-9A-Z]{16}\b"
)
"""Values that look like API keys or bearer tokens, wherever they appear in text."""
MASK: Final = "***"
MIN_KNOWN_SECRET: Final = 8
"""Registered secrets shorter than this are not masked (they would mask ordinary text)."""
MIN_VALUE_SECRET: Final = 4
"""A Plan's secret var values shorter than this are not masked (``register_value_secret``)."""
MAX_VALUE_SECRETS: Final = 1000
"""The most recent secret var values kept for masking in one process."""
_known_secrets: tuple[str, ...] = ()
_value_secrets: dict[str, None] = {}
_value_secrets_longest_first: tuple[str, ...] = ()
"""``_value_secrets`` ordered for masking (a secret inside a longer one is masked after
it), kept in step by ``register_value_secret`` so masking does not sort per text."""


def register_secret(value: str | SecretStr | None) -> None:
    """Mask ``value`` literally wherever it appears in logs, errors and run states.

    ``Settings`` registers every secret it holds when built (``config.secret_values``:
    each ``SecretStr`` field, the password of each URL field), so a key that is not
    shaped like ``sk-...`` (an Azure key, say) is masked too. Values shorter than
    ``MIN_KNOWN_SECRET`` characters are ignored. Registration lasts for the process.
    """
    global _known_secrets
    text = value if value is None or isinstance(value, str) else value.get_secret_value()
    if text and len(text) >= MIN_KNOWN_SECRET and text not in _known_secrets:
        _known_secrets = (*_known_secrets, text)


def register_value_secret(value: Any) -> None:
    """Mask ``value`` (a Plan's secret var: ``ui.vars.<name>.secret`` or a secret-looking
    name) wherever it appears in what is shown — logs, progress, results, errors —
    but not in the run state, which must keep it to resume the run (the state is
    readable by its owner only). Text (or a number, as written) of at least
    ``MIN_VALUE_SECRET`` characters; the last ``MAX_VALUE_SECRETS`` values of the
    process are kept."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)  # a number typed in (an account number read as one)
    if not isinstance(value, str) or len(value.strip()) < MIN_VALUE_SECRET:
        return
    global _value_secrets_longest_first
    _value_secrets.pop(value, None)
    _value_secrets[value] = None
    while len(_value_secrets) > MAX_VALUE_SECRETS:
        del _value_secrets[next(iter(_value_secrets))]
    _value_secrets_longest_first = tuple(sorted(_value_secrets, key=len, reverse=True))


def is_known_secret(text: str | None) -> bool:
    """True when ``text`` is a registered secret (``register_secret``)."""
    return text is not None and text in _known_secrets


def mask_known(text: str) -> str:
    """``text`` with every registered secret (``register_secret``) replaced by ``***``."""
    for secret in _known_secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def mask_shown(text: str) -> str:
    """``text`` with every registered secret and secret var value replaced by ``***``:
    what may be shown (the run state keeps the var values: ``mask_known``)."""
    if _known_secrets:
        text = mask_known(text)
    if _value_secrets_longest_first:
        for secret in _value_secrets_longest_first:
            if secret in text:
                text = text.replace(secret, MASK)
    return text


def mask_text(text: str) -> str:
    """``text`` with key-like substrings (``sk-...``, ``Bearer ...``), registered
    secrets and secret var values replaced by ``***``."""
    text = mask_shown(text)
    if "sk-" in text or "Bearer" in text or "AKIA" in text:
        return SECRET_VALUE.sub(MASK, text)
    return text


@functools.lru_cache(maxsize=4096)
def is_secret_key(name: str) -> bool:
    """True when values under the mapping key ``name`` are never shown (``SECRET_KEY``)."""
    return SECRET_KEY.search(name) is not None


def mask_secrets(value: Any) -> Any:
    """``value`` with secrets masked but nothing summarised (see ``run_log.sanitize``).

    For error dicts kept in the run state and shown to users: the values under
    secret-looking keys become ``***`` and text is passed through ``mask_text``;
    the shape (and non-text values) stay as they are.
    """
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, Mapping):
        return {
            key: MASK if item is not None and is_secret_key(str(key)) else mask_secrets(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [mask_secrets(item) for item in value]
    if isinstance(value, tuple):
        return tuple(mask_secrets(item) for item in value)
    return value

"""Settings changes in the audit trail (issue 33).

Settings come from the environment and ``.env``, which the product never writes: a
change is made by whoever edits them and restarts the server. So at every server start
``record_settings`` compares the settings in effect with the ones the audit trail last
recorded and, when they differ, appends a ``settings_changed`` entry naming each
setting that changed, with its value before and after. Secrets are never recorded:
a secret shows only whether it is set (``設定あり``), and text is masked
(``masking.mask_text``), and the user and password in a URL (a database URL) are
replaced by ``***``.
"""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

from keiri_agent.config import SECTIONS, Settings, without_credentials
from keiri_agent.masking import is_secret_key, mask_text
from keiri_agent.people.audit import AuditEntry, AuditTrail

SECRET_SET = "設定あり"


def settings_snapshot(settings: Settings) -> list[list[Any]]:
    """``[name, value]`` for every setting (by its flat name), secrets as ``設定あり``
    or None. Pairs, not a mapping: a setting's name is not a key of the entry (the
    trail refuses keys that name secrets, and ``api_token_roles`` is not one)."""
    pairs: list[list[Any]] = []
    for section in SECTIONS:
        for name, value in getattr(settings, section):
            pairs.append([name, _shown(name, value)])
    return sorted(pairs)


def _shown(name: str, value: Any) -> Any:
    if isinstance(value, SecretStr) or (is_secret_key(name) and isinstance(value, str)):
        return SECRET_SET if value else None
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple | frozenset | set):
        return [_shown("", item) for item in value]
    return without_credentials(mask_text(str(value)))


def record_settings(settings: Settings, trail: AuditTrail, actor: str) -> AuditEntry | None:
    """Append ``settings_changed`` when the settings differ from the last recorded
    ones (the first start records them all); the entry, or None when nothing changed."""
    current = settings_snapshot(settings)
    recorded = trail.entries(kind="settings_changed")
    before: dict[str, Any] = (
        {str(pair[0]): pair[1] for pair in recorded[-1].details.get("settings") or []}
        if recorded
        else {}
    )
    now = {str(pair[0]): pair[1] for pair in current}
    changed = [
        [name, before.get(name), value]
        for name, value in sorted(now.items())
        if name not in before or before[name] != value
    ]
    changed += [[name, value, None] for name, value in sorted(before.items()) if name not in now]
    if recorded and not changed:
        return None
    return trail.append(actor, "settings_changed", "", {"settings": current, "changed": changed})

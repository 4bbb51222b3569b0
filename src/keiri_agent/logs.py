"""Log lines on stderr for people watching a run (seed 001 §9: INFO start/finish, DEBUG detail).

Every module logs under ``keiri_agent.*`` (``keiri_agent.helpdesk``, ``keiri_agent.plans``,
...). Nothing is shown below WARNING unless asked: ``KEIRI_AGENT_LOG_LEVEL=INFO`` (or
``DEBUG``) in the environment, or ``keiri-agent -v`` / ``-vv`` on the command line.

Personal data (``pii``: the kinds of the ``pii_filter`` setting) in a line — its
message, traceback and stack — is replaced by typed placeholders (``RedactPersonalData``
on the handler) before the line is written.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable

from keiri_agent.pii import KINDS, checked_kinds, redact

LOGGER_NAME = "keiri_agent"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_HANDLER_NAME = "keiri_agent.stderr"


class RedactPersonalData(logging.Filter):
    """Replaces the personal data of ``kinds`` in a record's message, traceback and
    stack (the record itself, so handlers called after this one see it replaced too)."""

    def __init__(self, kinds: Iterable[str] = KINDS) -> None:
        super().__init__()
        self.kinds = checked_kinds(kinds)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format: logging reports it, as without this filter
            return True
        cleaned = redact(message, self.kinds).text
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.kinds).text
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.kinds).text
        return True


def configure_logging(level: str | int, *, pii_kinds: Iterable[str] = KINDS) -> None:
    """Show ``keiri_agent`` log lines at ``level`` and above on stderr (idempotent).

    Calling it again changes the level and points the handler at the current
    ``sys.stderr`` (which test runners and Streamlit swap). ``pii_kinds``: the personal
    data replaced in every line (``RedactPersonalData``; empty: none).
    """
    resolved = logging.getLevelName(level.upper()) if isinstance(level, str) else level
    if not isinstance(resolved, int):
        raise ValueError(f"unknown log level {level!r}: use DEBUG, INFO, WARNING or ERROR")
    logger = logging.getLogger(LOGGER_NAME)
    handler = next((h for h in logger.handlers if h.get_name() == _HANDLER_NAME), None)
    if handler is None:
        handler = logging.StreamHandler(sys.stderr)
        handler.set_name(_HANDLER_NAME)
        handler.setFormatter(logging.Formatter(FORMAT, datefmt="%H:%M:%S"))
        logger.addHandler(handler)
    elif isinstance(handler, logging.StreamHandler) and handler.stream is not sys.stderr:
        handler.acquire()  # not setStream(): it flushes the old stream, which may be closed
        try:
            handler.stream = sys.stderr
        finally:
            handler.release()
    handler.setLevel(resolved)
    for old in [f for f in handler.filters if isinstance(f, RedactPersonalData)]:
        handler.removeFilter(old)
    if kinds := checked_kinds(pii_kinds):
        handler.addFilter(RedactPersonalData(kinds))
    # lower the logger's threshold only when asked for more than warnings; otherwise it
    # inherits from the root logger as before (what other handlers, e.g. pytest, expect)
    logger.setLevel(resolved if resolved < logging.WARNING else logging.NOTSET)

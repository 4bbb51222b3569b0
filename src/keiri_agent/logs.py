"""Log lines on stderr for people watching a run (seed 001 §9: INFO start/finish, DEBUG detail).

Every module logs under ``keiri_agent.*`` (``keiri_agent.helpdesk``, ``keiri_agent.plans``,
...). Nothing is shown below WARNING unless asked: ``KEIRI_AGENT_LOG_LEVEL=INFO`` (or
``DEBUG``) in the environment, or ``keiri-agent -v`` / ``-vv`` on the command line.
"""

from __future__ import annotations

import logging
import sys

LOGGER_NAME = "keiri_agent"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_HANDLER_NAME = "keiri_agent.stderr"


def configure_logging(level: str | int) -> None:
    """Show ``keiri_agent`` log lines at ``level`` and above on stderr (idempotent).

    Calling it again changes the level and points the handler at the current
    ``sys.stderr`` (which test runners and Streamlit swap).
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
    # lower the logger's threshold only when asked for more than warnings; otherwise it
    # inherits from the root logger as before (what other handlers, e.g. pytest, expect)
    logger.setLevel(resolved if resolved < logging.WARNING else logging.NOTSET)

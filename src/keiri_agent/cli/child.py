"""A server run in a child process that stops when this process stops (``keiri-agent ui``).

``run_child`` starts the command and waits for it. SIGTERM or SIGINT to this process is
passed on to the child, which gets ``STOP_GRACE_S`` seconds to stop before it is
killed (a second signal kills it at once); the exit code is then 128 + the signal, as a
process killed by it would report. On Linux the kernel also sends the child SIGTERM when
this process dies in a way it cannot handle (SIGKILL, a crash): ``PR_SET_PDEATHSIG``.
So no server is left serving its port after the command is gone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

STOP_GRACE_S = 10.0
"""How long the child may take to stop after the signal before it is killed."""
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_PR_SET_PDEATHSIG = 1


class _Stop(Exception):
    """Raised by the signal handler to end the wait for the child."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stop(signum: int, frame: Any) -> None:
    raise _Stop(signum)


def _death_signal() -> Callable[[], None] | None:
    """For ``preexec_fn`` (Linux): the child gets SIGTERM when this process dies."""
    if sys.platform != "linux":
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork
    parent = os.getpid()

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return set_death_signal


def run_child(command: Sequence[str], env: Mapping[str, str]) -> int:
    """Run ``command`` until it exits or this process gets SIGTERM/SIGINT; its exit code.

    Call from the main thread (signal handlers are installed there while it runs).
    """
    child = subprocess.Popen(command, env=env, preexec_fn=_death_signal())
    previous = {signum: signal.signal(signum, _raise_stop) for signum in _STOP_SIGNALS}
    try:
        return child.wait()
    except _Stop as stop:
        for signum in _STOP_SIGNALS:  # a second signal kills the child at once
            signal.signal(signum, lambda *_: child.kill())
        child.send_signal(stop.signum)
        try:
            child.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        return 128 + stop.signum
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

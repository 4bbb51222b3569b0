"""Run one analysis action in a forked child process under a time and a memory limit.

``run_isolated(func, *args, timeout_s=..., memory_mb=...)`` forks; the child sees the
parent's DataFrames copy-on-write (nothing big is pickled), runs ``func(*args)`` and
sends the pickled result (or exception) back through a pipe; the parent waits with
``poll`` on the pipe, so a fast action returns as soon as its result arrives.

Limits:

- time: at ``timeout_s`` the parent SIGKILLs the child and raises ActionTimeoutError.
- memory ("beyond the loaded dataset"), two mechanisms, both needed (measured):

  1. the child sets ``RLIMIT_DATA`` (Linux; ``RLIMIT_AS`` elsewhere) to its size at
     fork + ``memory_mb``: a fresh allocation past it fails at once with MemoryError
     and the parent raises ActionMemoryError. RLIMIT_DATA rather than RLIMIT_AS
     because PROT_NONE reservations (glibc reserves 64 MiB of address space per
     thread arena) would make a few threads exceed an RLIMIT_AS budget.
  2. the parent polls the child's peak RSS (``VmHWM``, 2 ms doubling to 20 ms) and
     SIGKILLs it when the growth over its RSS at fork exceeds ``memory_mb``: memory
     that allocators (pyarrow's mimalloc, glibc's heap) reserved before the fork is
     reused without any new mapping, so no rlimit sees it.

  A child that dies without a result after a peak near the limit is also reported
  as ActionMemoryError (native code may crash instead of raising MemoryError).

Forking a multi-threaded process (Streamlit runs sessions in threads) is only safe
if the child never needs a lock another thread held at fork time. The child
therefore does little beyond ``func``: no logging, no imports of its own, thread
pools of BLAS/OpenMP limited to one thread through a controller built in the
parent, Python's signal handlers reset, ``os._exit`` at the end (no atexit handlers,
no flushing of the parent's buffers, so ``print`` output of ``func`` is lost).
``func`` itself should follow the same rules: pure pandas/numpy/matplotlib work on
data it was given, no logging, no threads holding locks.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import signal
import stat
import sys
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from keiri_agent.errors import (
    ActionMemoryError,
    ActionTimeoutError,
    ExecutionError,
    KeiriAgentError,
)

try:  # POSIX only; run_isolated explains the requirement elsewhere
    import resource
    import select
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]
    select = None  # type: ignore[assignment]

T = TypeVar("T")

_MIB = 2**20
_HEADER_SIZE = 9  # 1 status byte + 8-byte big-endian payload length
_OK, _RAISED, _MEMORY, _UNPICKLABLE = 0, 1, 2, 3
_POLL_FIRST_S, _POLL_MAX_S = 0.002, 0.02
WORKER_IDLE_S = 120.0  # a worker unused this long is replaced before its next action
_WORKER_EXIT_IDLE_S = 600  # ... and ends itself after this long without a request
_WORKER_MAX_ACTIONS = 500
_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_BLAS_MODULES = ("numpy", "scipy", "sklearn", "torch", "numexpr")
_HAS_PROC = os.path.exists("/proc/self/statm")
if not _HAS_PROC:  # macOS: memory figures through psutil (imported here, not in a child)
    import psutil
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

# pipe ends of actions in flight: a child closes the ones of other threads' actions
_open_fds: set[int] = set()
# children whose result arrived before they finished exiting (reaped on later calls)
_unreaped: set[int] = set()
_controller_lock = threading.Lock()
_controller: tuple[frozenset[str], Any] | None = None

# Python 3.12+ warns on every fork of a multi-threaded process; the child is kept
# minimal on purpose (see the module docstring), so the warning is noise here.
warnings.filterwarnings(
    "ignore", message=r".*use of fork\(\) may lead to deadlocks", category=DeprecationWarning
)


def configure_blas_threads(threads: int = 1) -> None:
    """Default OpenBLAS/OpenMP/MKL to ``threads`` threads; call it early in a process.

    Sets the environment variables with ``os.environ.setdefault`` (explicit user
    settings win), which only works before numpy is imported. When numpy is already
    loaded (importing this package's ``__init__`` loads it) and the user set none of
    the variables, the loaded thread pools are limited directly with threadpoolctl.
    A pool of BLAS threads in the parent makes every fork slower (OpenBLAS shuts it
    down around fork) and is what can hang in a forked child.
    """
    user_set = any(name in os.environ for name in _BLAS_ENV)
    for name in _BLAS_ENV:
        os.environ.setdefault(name, str(threads))
    if not user_set and any(name in sys.modules for name in _BLAS_MODULES):
        from threadpoolctl import ThreadpoolController

        ThreadpoolController().limit(limits=threads)


def isolation_available() -> bool:
    """True when this platform can fork (Linux, macOS)."""
    return hasattr(os, "fork") and select is not None and hasattr(select, "poll")


def _require_isolation() -> None:
    """Raise the Japanese "no fork here" error when isolation cannot run on this OS."""
    if not isolation_available():
        raise ExecutionError(
            "この OS では分析を別プロセスで実行できません（Linux か macOS が必要です）",
            hint="設定ファイルか環境変数で KEIRI_AGENT_ANALYSIS_ISOLATION=false にすると、"
            "時間とメモリの上限なしで実行できます",
        )


def run_isolated(func: Callable[..., T], *args: Any, timeout_s: float, memory_mb: int) -> T:
    """Run ``func(*args)`` in a forked child within ``timeout_s`` and ``memory_mb``.

    Args:
        func: any callable (closures and lambdas are fine; only the result is pickled).
        *args: its arguments, shared with the child copy-on-write.
        timeout_s: wall-clock limit in seconds.
        memory_mb: memory the child may use beyond what it shares with the parent (MiB).

    Returns:
        What ``func`` returned, unpickled.

    Raises:
        ActionTimeoutError: the child ran past ``timeout_s`` and was killed.
        ActionMemoryError: the child went over ``memory_mb`` and was stopped.
        ExecutionError: no fork on this platform, unpicklable result, or a crashed child.
        Exception: whatever ``func`` raised, re-raised with the same type and fields.
    """
    _require_isolation()
    _reap_finished()
    controller = _blas_controller()
    read_fd, write_fd = os.pipe()
    _open_fds.update((read_fd, write_fd))
    started = time.monotonic()
    try:
        pid = os.fork()
    except OSError as exc:
        for fd in (read_fd, write_fd):
            _close(fd)
        raise _fork_error(exc) from exc
    if pid == 0:  # pragma: no cover - runs in the child, reported through the pipe
        _child(write_fd, func, args, memory_mb, controller)
    _close(write_fd)
    child = _Child(pid, _rss(pid))
    try:
        message = _supervise(child, read_fd, started + timeout_s, memory_mb * _MIB)
    finally:
        _close(read_fd)
        child.finish()
    return _outcome(child, message, timeout_s, memory_mb)


def _fork_error(exc: OSError) -> ExecutionError:
    return ExecutionError(
        f"分析用のプロセスを開始できませんでした: {exc}",
        hint="サーバーのメモリかプロセス数が不足しています。しばらくしてからやり直してください",
    )


def _outcome(
    child: _Child, message: tuple[int, bytes] | None, timeout_s: float, memory_mb: int
) -> Any:
    """The result of one action, or the error its ending calls for."""
    if child.outcome == "timeout":
        raise ActionTimeoutError(
            f"分析が {timeout_s:g} 秒以内に終わらなかったため止めました",
            hint="絞り込み条件でデータを減らすか、列やグループを減らしてください。"
            "上限は設定 KEIRI_AGENT_ANALYSIS_TIMEOUT_S で変えられます",
            details={"timeout_s": timeout_s},
        )
    if child.outcome == "memory" or (message is not None and message[0] == _MEMORY):
        raise _memory_error(memory_mb, child.peak_growth)
    if message is None:
        if child.peak_growth is not None and child.peak_growth >= 0.8 * memory_mb * _MIB:
            raise _memory_error(memory_mb, child.peak_growth)
        raise ExecutionError(
            f"分析用のプロセスが結果を返さずに終了しました（{child.outcome}）",
            hint="データを減らしてやり直してください。続く場合はシステム管理者に連絡してください",
            details={"status": child.outcome},
        )
    return _decode(message[0], message[1])


class IsolatedWorker:
    """A child forked once with ``bound`` (a dataset), running actions until it breaks a limit.

    ``call(func, *args, ...)`` runs ``func(*args, *bound)`` in the worker under the same
    time and memory limits as ``run_isolated`` and returns its result. Only ``func``,
    ``args`` and the result cross the pipe (pickled); ``bound`` is the parent's data,
    shared copy-on-write at fork. A fresh child per action pays for copying every
    heap page the action writes (thousands of page faults for a groupby on 1M rows);
    a reused worker pays that once, so later actions cost about what they cost
    in-process plus the transfer.

    The worker ends (and ``alive`` turns False) when an action is killed for time or
    memory, when it crashes, when it holds more than half the memory budget beyond
    what it had at fork, after ``_WORKER_MAX_ACTIONS`` actions, or after
    ``WORKER_IDLE_S`` without one (it pins the parent's memory as of its fork);
    the caller then starts a new one. Not thread-safe: callers serialise through
    ``lock`` (``run_isolated`` is the fallback while it is busy).
    """

    def __init__(self, *bound: Any) -> None:
        _require_isolation()
        _reap_finished()
        self.lock = threading.Lock()
        controller = _blas_controller()
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        fds = (request_read, request_write, reply_read, reply_write)
        _open_fds.update(fds)
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in fds:
                _close(fd)
            raise _fork_error(exc) from exc
        if pid == 0:  # pragma: no cover - runs in the worker
            _worker_loop(request_read, reply_write, bound, controller)
        _close(request_read)
        _close(reply_write)
        self._request_fd, self._reply_fd = request_write, reply_read
        self._child = _Child(pid, _rss(pid))
        self._fork_rss = self._child.start_rss
        self._actions = 0
        self._last_used = time.monotonic()
        self.alive = True
        self._finalizer = weakref.finalize(self, _end_worker, self._child, fds[1:3])

    @property
    def pid(self) -> int:
        return self._child.pid

    def idle(self) -> bool:
        """True when it waited longer than ``WORKER_IDLE_S`` for an action."""
        return time.monotonic() - self._last_used > WORKER_IDLE_S

    def call(self, func: Callable[..., T], *args: Any, timeout_s: float, memory_mb: int) -> T:
        """Run ``func(*args, *bound)`` in the worker; raises like ``run_isolated``."""
        if not self.alive or self._child.wait(os.WNOHANG):
            self.close()
            raise ExecutionError(
                "分析用のプロセスが終了していました",
                hint="もう一度実行してください。続く場合はシステム管理者に連絡してください",
            )
        started = time.monotonic()
        child = self._child
        child.outcome, child.peak_growth, child.start_rss = "running", None, _rss(child.pid)
        try:
            request = _dumps((func, args, memory_mb))
        except Exception as exc:
            raise ExecutionError(
                f"分析の指定を受け渡せませんでした: {type(exc).__name__}: {exc}",
                hint="別の指定でやり直してください。続く場合はシステム管理者に連絡してください",
            ) from exc
        try:
            _write_all(self._request_fd, len(request).to_bytes(8, "big") + request)
            message = _supervise(child, self._reply_fd, started + timeout_s, memory_mb * _MIB)
        except BaseException:
            self.close()
            raise
        self._actions += 1
        self._last_used = time.monotonic()
        if (
            message is None
            or child.outcome != "done"
            or message[0] == _MEMORY
            or (
                self._actions >= _WORKER_MAX_ACTIONS
                or _rss(child.pid) - self._fork_rss > memory_mb * _MIB // 2
            )
        ):
            self.close()
        return _outcome(child, message, timeout_s, memory_mb)

    def close(self) -> None:
        """End the worker (SIGKILL, reaped) and close its pipes; safe to call twice."""
        self.alive = False
        self._finalizer()


def _end_worker(child: _Child, fds: tuple[int, int]) -> None:
    for fd in fds:
        _close(fd)
    if not child.reaped:
        child.kill(child.outcome if child.outcome != "running" else "closed")


class _Child:
    """A forked child: its pid, RSS at fork, and how it ended."""

    def __init__(self, pid: int, start_rss: int) -> None:
        self.pid = pid
        self.start_rss = start_rss
        self.outcome = "running"
        self.peak_growth: int | None = None
        self.reaped = False

    def kill(self, outcome: str) -> None:
        """SIGKILL and reap (blocking: a killed child goes fast)."""
        self.outcome = outcome
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        self.wait(0)

    def wait(self, flags: int) -> bool:
        """Reap with ``waitpid`` flags; True once reaped. Records status and peak RSS."""
        try:
            pid, status, usage = os.wait4(self.pid, flags)
        except ChildProcessError:
            self.reaped = True
            return True
        if pid == 0:
            return False
        self.reaped = True
        if self.outcome == "running":
            self.outcome = _describe_status(status)
        peak = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        if self.peak_growth is None and peak:
            self.peak_growth = max(0, peak - self.start_rss)
        return True

    def finish(self) -> None:
        """Reap now if it is done, else later (its exit may take ms); never leak it."""
        if self.reaped:
            return
        if self.outcome == "running":  # interrupted in the parent: do not leave it running
            self.kill("interrupted")
        elif not self.wait(os.WNOHANG):
            _unreaped.add(self.pid)


def _supervise(
    child: _Child, read_fd: int, deadline: float, limit: int
) -> tuple[int, bytes] | None:
    """Wait for the child's ``(status, payload)`` while enforcing deadline and memory."""
    poller = select.poll()
    poller.register(read_fd, select.POLLIN | select.POLLHUP)
    buffer = bytearray()
    interval = _POLL_FIRST_S
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            child.kill("timeout")
            return None
        if poller.poll(min(remaining, interval) * 1000):
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:  # EOF without a full message: the child died
                child.wait(0)
                return None
            buffer += chunk
            message = _parse(buffer)
            if message is not None:
                child.outcome = "done"
                return message
            continue
        interval = min(interval * 2, _POLL_MAX_S)
        peak = _peak_rss(child.pid)
        if peak - child.start_rss > limit:
            child.peak_growth = peak - child.start_rss
            child.kill("memory")
            return None
        if child.wait(os.WNOHANG):
            # it exited (maybe just after writing; a sibling may hold its pipe end): drain
            while poller.poll(0):
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    break
                buffer += chunk
            return _parse(buffer)


def _parse(buffer: bytearray) -> tuple[int, bytes] | None:
    """``(status, payload)`` once the buffer holds a whole message, else None."""
    if len(buffer) < _HEADER_SIZE:
        return None
    end = _HEADER_SIZE + int.from_bytes(buffer[1:_HEADER_SIZE], "big")
    if len(buffer) < end:
        return None
    return buffer[0], bytes(buffer[_HEADER_SIZE:end])


def _decode(status: int, payload: bytes) -> Any:
    """The result, or raise what the child reported."""
    if status == _UNPICKLABLE:
        raise ExecutionError(
            "分析の結果を受け渡せませんでした: " + payload.decode("utf-8", "replace"),
            hint="別の指定でやり直してください。続く場合はシステム管理者に連絡してください",
        )
    try:
        value = pickle.loads(payload)
    except Exception as exc:
        raise ExecutionError(
            f"分析の結果を読み取れませんでした: {type(exc).__name__}: {exc}",
            hint="別の指定でやり直してください。続く場合はシステム管理者に連絡してください",
        ) from exc
    if status == _OK:
        return value
    error, type_name, text = value
    if isinstance(error, Exception):
        raise error
    raise ExecutionError(
        f"分析の実行中にエラーが起きました（{type_name}: {text}）",
        hint="別の列・集計・絞り込み条件で簡単な指定にするか、指定した列の値を確かめてください",
        details={"exception": type_name},
    )


def _rebuild_error(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    """Unpickle a KeiriAgentError without calling ``__init__`` (any signature works)."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class _Pickler(pickle.Pickler):
    """Pickles KeiriAgentError subclasses field by field, whatever their ``__init__``."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, KeiriAgentError):
            return _rebuild_error, (type(obj), obj.args, dict(obj.__dict__))
        return NotImplemented


def _dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def _child(
    write_fd: int, func: Callable[..., Any], args: tuple[Any, ...], memory_mb: int, controller: Any
) -> NoReturn:  # pragma: no cover - runs in the child
    code = 70
    try:
        _prepare_child((write_fd,), controller)
        _limit_memory(memory_mb)
        status, payload = _run(func, args)
        _write_all(write_fd, bytes([status]) + len(payload).to_bytes(8, "big") + payload)
        code = 0
    finally:
        os._exit(code)


def _prepare_child(keep: tuple[int, ...], controller: Any) -> None:  # pragma: no cover - child
    """First steps of a forked child: other actions' pipes closed, default signal
    handlers, the parent's objects frozen out of garbage collection, one BLAS thread."""
    for fd in list(_open_fds):
        if fd not in keep:
            _close(fd)
    _close_inherited_sockets(keep)
    with contextlib.suppress(ValueError):  # the parent's handlers must not run here
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
    gc.freeze()  # collections in the child skip the parent's objects (no COW storm)
    if controller is not None:
        controller.limit(limits=1)


def _close_inherited_sockets(keep: tuple[int, ...]) -> None:  # pragma: no cover - child
    """Close the parent's sockets in a forked child: the app's listening socket and its
    open connections (browser keep-alives, the websocket, the API's clients).

    A child holding a copy keeps a connection open after the parent closes it: the
    browser sends its next request on it and nobody ever reads it (the app froze once
    six such connections had built up), and a listening port stays bound after the
    app exits. Files are left alone (an action may read through one)."""
    folder = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    try:
        fds = [int(name) for name in os.listdir(folder)]
    except OSError:
        return
    for fd in fds:
        if fd in keep:
            continue
        try:
            is_socket = stat.S_ISSOCK(os.fstat(fd).st_mode)
        except OSError:
            continue  # the folder's own descriptor, already closed
        if is_socket:
            _close(fd)


def _worker_loop(
    request_fd: int, reply_fd: int, bound: tuple[Any, ...], controller: Any
) -> NoReturn:  # pragma: no cover - runs in the worker child
    """Serve ``(func, args, memory_mb)`` requests until the parent closes the pipe or
    stops sending (idle), each run as ``func(*args, *bound)`` under its memory limit."""
    code = 70
    try:
        _prepare_child((request_fd, reply_fd), controller)
        poller = select.poll()
        poller.register(request_fd, select.POLLIN | select.POLLHUP)
        while poller.poll(_WORKER_EXIT_IDLE_S * 1000):
            header = _read_exactly(request_fd, 8)
            if header is None:
                break
            request = _read_exactly(request_fd, int.from_bytes(header, "big"))
            if request is None:
                break
            func, args, memory_mb = pickle.loads(request)
            _limit_memory(memory_mb)
            status, payload = _run(func, (*args, *bound))
            _reset_peak_rss()  # the next action's peak is measured from here
            _write_all(reply_fd, bytes([status]) + len(payload).to_bytes(8, "big") + payload)
        code = 0
    finally:
        os._exit(code)


def _read_exactly(fd: int, size: int) -> bytes | None:  # pragma: no cover - worker child
    chunks = bytearray()
    while len(chunks) < size:
        chunk = os.read(fd, size - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def _reset_peak_rss() -> None:  # pragma: no cover - worker child
    """Reset this process's VmHWM to its current RSS (Linux; elsewhere nothing to reset)."""
    if _HAS_PROC:
        with contextlib.suppress(OSError):
            fd = os.open("/proc/self/clear_refs", os.O_WRONLY)
            try:
                os.write(fd, b"5")
            finally:
                os.close(fd)


def _run(func: Callable[..., Any], args: tuple[Any, ...]) -> tuple[int, bytes]:
    """Call func in the child; the (status, payload) to send."""
    try:
        result = func(*args)
    except MemoryError:
        return _MEMORY, b""
    except BaseException as exc:
        return _RAISED, _dump_exception(exc)
    try:
        return _OK, _dumps(result)
    except MemoryError:
        return _MEMORY, b""
    except Exception as exc:
        return _UNPICKLABLE, f"{type(exc).__name__}: {exc}".encode()


def _dump_exception(exc: BaseException) -> bytes:
    if not isinstance(exc, KeiriAgentError):
        with contextlib.suppress(Exception):
            text = "".join(traceback.format_exception(exc)).rstrip()
            exc.add_note("raised in the analysis child process:\n" + text)
    sendable = exc if isinstance(exc, Exception) else None
    try:
        payload = _dumps((sendable, type(exc).__qualname__, str(exc)))
        pickle.loads(payload)  # must also rebuild in the parent
        return payload
    except Exception:
        return _dumps((None, type(exc).__qualname__, str(exc)))


def _limit_memory(memory_mb: int) -> None:
    """Cap new private memory of this (child) process at ``memory_mb`` (soft limit).

    Linux: RLIMIT_DATA (private writable mappings, brk and mmap alike) over the current
    data size, so PROT_NONE reservations (glibc's 64 MiB per-thread malloc arenas,
    thread guard pages) do not count as they would with RLIMIT_AS. Elsewhere:
    RLIMIT_AS over the current virtual size, best effort (macOS ignores it).
    """
    if resource is None:
        return
    if _HAS_PROC:
        kind, current = resource.RLIMIT_DATA, _statm("self", 5)
    else:
        kind, current = resource.RLIMIT_AS, _virtual_size()
    if current <= 0:
        return
    _, hard = resource.getrlimit(kind)
    limit = current + memory_mb * _MIB
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    with contextlib.suppress(ValueError, OSError):  # the parent's RSS watch still applies
        resource.setrlimit(kind, (limit, hard))


def _statm(pid: int | str, field: int) -> int:
    """One field of /proc/<pid>/statm in bytes (1: resident, 5: data + stack); 0 if gone."""
    try:
        fd = os.open(f"/proc/{pid}/statm", os.O_RDONLY)
        try:
            return int(os.read(fd, 256).split()[field]) * _PAGE
        finally:
            os.close(fd)
    except (OSError, IndexError, ValueError):
        return 0


def _rss(pid: int) -> int:
    """Current resident set size of ``pid`` in bytes (0 if unknown)."""
    if _HAS_PROC:
        return _statm(pid, 1)
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:
        return 0


def _peak_rss(pid: int) -> int:
    """Peak RSS so far (VmHWM) of ``pid`` in bytes; current RSS where there is no /proc."""
    if not _HAS_PROC:
        return _rss(pid)
    try:
        fd = os.open(f"/proc/{pid}/status", os.O_RDONLY)
        try:
            text = os.read(fd, 4096)
        finally:
            os.close(fd)
        start = text.index(b"VmHWM:") + 6
        return int(text[start : text.index(b"kB", start)]) * 1024
    except (OSError, ValueError):
        return 0


def _virtual_size() -> int:
    try:
        return int(psutil.Process().memory_info().vms)
    except psutil.Error:
        return 0


def _memory_error(memory_mb: int, growth: int | None) -> ActionMemoryError:
    details: dict[str, Any] = {"memory_mb": memory_mb}
    if growth is not None:
        details["peak_growth_mb"] = round(growth / _MIB, 1)
    return ActionMemoryError(
        f"分析が読み込んだデータのほかに {memory_mb} MiB を超えるメモリを使ったため止めました",
        hint="絞り込み条件で行を減らすか、列やグループを減らしてください。"
        "上限は設定 KEIRI_AGENT_ANALYSIS_MEMORY_MB で変えられます",
        details=details,
    )


def _reap_finished() -> None:
    """Reap children that had not finished exiting when their result arrived."""
    for pid in list(_unreaped):
        try:
            done = os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:
            done = True
        if done:
            _unreaped.discard(pid)


def _blas_controller() -> Any:
    """A threadpoolctl controller for the loaded BLAS/OpenMP libraries (built in the parent).

    Built once per set of loaded numeric modules, so the child only makes ctypes calls
    (no library scan, which takes the dynamic loader's lock).
    """
    global _controller
    loaded = frozenset(name for name in _BLAS_MODULES if name in sys.modules)
    if not loaded:
        return None
    with _controller_lock:
        if _controller is None or _controller[0] != loaded:
            from threadpoolctl import ThreadpoolController

            _controller = (loaded, ThreadpoolController())
        return _controller[1]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _close(fd: int) -> None:
    _open_fds.discard(fd)
    with contextlib.suppress(OSError):
        os.close(fd)


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            return f"シグナル {signal.Signals(signum).name} で強制終了"
        except ValueError:
            return f"シグナル {signum} で強制終了"
    return f"終了コード {os.WEXITSTATUS(status)}"

"""A TCP proxy on loopback in front of a server, whose live connections a test can cut
at a moment of its choosing (a dropped network connection, as the browser sees it)."""

from __future__ import annotations

import socket
import struct
import threading
import time


class CuttableProxy:
    """Forwards 127.0.0.1:``port`` to ``upstream_port``; ``cut(down_s)`` resets every
    live connection (both sides) and, for ``down_s`` seconds, every new one (the network
    stays down a while, so the page's reconnecting state can be seen)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port: int = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.cuts = 0
        self._down_until = 0.0
        self._lock = threading.Lock()
        self._live: set[socket.socket] = set()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def start(self) -> CuttableProxy:
        self._thread.start()
        return self

    def cut(self, down_s: float = 0.0) -> int:
        """Reset every live connection (and new ones for ``down_s`` seconds); how many
        sockets were cut."""
        with self._lock:
            live, self._live = list(self._live), set()
            self.cuts += 1
            self._down_until = time.monotonic() + down_s
        for sock in live:
            _reset(sock)
        return len(live)

    def live_connections(self) -> int:
        with self._lock:
            return len(self._live) // 2

    def stop(self) -> None:
        self._closed.set()
        self.listener.close()
        self.cut()
        self._thread.join(timeout=5)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                down = time.monotonic() < self._down_until
            if down:
                _reset(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                _reset(client)
                continue
            server.settimeout(None)
            with self._lock:
                self._live.update((client, server))
            finished = [0]
            for source, target in ((client, server), (server, client)):
                threading.Thread(
                    target=self._pump, args=(source, target, finished), daemon=True
                ).start()

    def _pump(self, source: socket.socket, target: socket.socket, finished: list[int]) -> None:
        """Copy ``source`` to ``target``; the pair is closed when both directions ended
        or one failed (a cut, a reset)."""
        failed = False
        try:
            while chunk := source.recv(65536):
                target.sendall(chunk)
            target.shutdown(socket.SHUT_WR)
        except OSError:
            failed = True
        with self._lock:
            finished[0] += 1
            close = failed or finished[0] == 2
            if close:
                self._live.discard(source)
                self._live.discard(target)
        if close:
            source.close()
            target.close()


def _reset(sock: socket.socket) -> None:
    """Close with a TCP reset (SO_LINGER 0), as a dropped connection looks."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()

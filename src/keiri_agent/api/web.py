"""The web UI at ``/``: the static export of ``web/`` (Next.js), served by the API's process.

``mount(app, settings)`` adds it as the app's LAST route, so ``/api``, ``/graphql``,
``/docs`` and ``/openapi.json`` keep priority. The folder is ``settings.api.web_dir``
(``KEIRI_AGENT_WEB_DIR``), by default the repository's ``web/out`` (``make web``).

- Static files need no token: they hold no data (the page asks the API for it).
- A path under ``/api`` or ``/graphql`` that no route answers stays the API's JSON 404.
- While the export is missing, ``/`` and every page a browser asks for (``Accept:
  text/html``) answer a short Japanese HTML page that says how to build it (checked
  per request, so a build during a run is picked up).
- A path with no file is the export's ``404.html`` for a browser, and the API's JSON
  404 for any other client (a script that mistyped an ``/api`` path it normalised).
- Every response carries ``X-Content-Type-Options: nosniff`` and
  ``Referrer-Policy: no-referrer``; HTML ones a Content-Security-Policy that fits a
  Next.js static export (its bootstrap scripts are inline) and no framing.
- Starlette's ``StaticFiles`` refuses paths that leave the folder (``..``, symlinks).
- Compressed and cached: ``npm run build`` writes a Brotli (``.br``) and a gzip
  (``.gz``) copy of each text file (``web/scripts/compress.mjs``); a browser that
  accepts one gets it (``Content-Encoding``, ``Vary: Accept-Encoding``). Files under
  ``/_next/static/`` have content hashes in their names: cached for a year
  (``immutable``); pages are revalidated on every load (``no-cache``).
"""

from __future__ import annotations

import mimetypes
import stat
from html import escape
from pathlib import Path

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

import keiri_agent
from keiri_agent.config import Settings

API_PREFIXES = ("/api", "/graphql")
"""Paths the web UI never answers: they belong to the API (its JSON 404)."""
HASHED = "/_next/static/"
"""Where the export's file names carry their content hash: cached for good."""
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))
"""The precompressed copies, in the order preferred."""


def cache_control(path: str) -> bytes:
    return b"public, max-age=31536000, immutable" if path.startswith(HASHED) else b"no-cache"


def accepted_encodings(scope: Scope) -> set[str]:
    """The content codings the request accepts (``Accept-Encoding``, q=0 left out)."""
    for key, value in scope.get("headers", []):
        if key == b"accept-encoding":
            found = set()
            for part in value.decode("latin-1").split(","):
                name, _, params = part.strip().partition(";")
                if params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
                    found.add(name.strip().lower())
            return found
    return set()


def default_web_dir() -> Path:
    """The repository's ``web/out`` (next to ``src/``)."""
    return Path(keiri_agent.__file__).resolve().parents[2] / "web" / "out"


def web_dir(settings: Settings) -> Path:
    return settings.api.web_dir if settings.api.web_dir is not None else default_web_dir()


def content_security_policy(settings: Settings) -> str:
    connect = " ".join(["'self'", *(o.rstrip("/") for o in settings.api.api_cors_origins)])
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self' 'unsafe-inline'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            f"connect-src {connect}",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def not_built_page(directory: Path) -> str:
    """The Japanese page shown while the export is missing."""
    return f"""<!doctype html>
<html lang="ja">
<head><meta charset="utf-8"><title>keiri-agent — Web 画面が未作成です</title></head>
<body style="font-family: sans-serif; max-width: 40rem; margin: 3rem auto; line-height: 1.7">
<h1>Web 画面がまだ作成されていません</h1>
<p>API は動いています。Web 画面を使うには、リポジトリの最上位で次のどちらかを実行して
Web 画面を作成し、このページを再読み込みしてください（Node.js 20 以降が必要です）。</p>
<pre>make web</pre>
<pre>cd web &amp;&amp; npm ci &amp;&amp; npm run build</pre>
<p>探した場所: <code>{escape(str(directory))}</code>（別の場所にある場合は
<code>KEIRI_AGENT_WEB_DIR</code> で指定します）。API の一覧は <a href="/docs">/docs</a>
にあります。</p>
</body>
</html>
"""


def accepts_html(scope: Scope) -> bool:
    """True when the request is a browser's page load (``Accept`` names text/html)."""
    for key, value in scope.get("headers", []):
        if key == b"accept":
            return b"text/html" in value
    return False


class _ExportFiles(StaticFiles):
    """``StaticFiles`` whose not-found is the API's JSON 404 unless a browser asks."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code == 404 and not accepts_html(scope):
            raise HTTPException(404)
        return response


class WebUI:
    """ASGI app of the mount at ``/`` (see the module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self.directory = web_dir(settings)
        self.files = _ExportFiles(directory=self.directory, html=True, check_dir=False)
        self.policy = content_security_policy(settings).encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "/")
        if any(path == prefix or path.startswith(prefix + "/") for prefix in API_PREFIXES):
            raise HTTPException(404)  # answered by the API's JSON handler
        if scope.get("method", "GET") not in ("GET", "HEAD"):
            raise HTTPException(404)  # no API route here: not a 405 of a static file

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cache-control", cache_control(path)),
                    (b"vary", b"Accept-Encoding"),
                ]
                content_type = dict(headers).get(b"content-type", b"")
                if content_type.startswith(b"text/html"):
                    headers += [
                        (b"content-security-policy", self.policy),
                        (b"x-frame-options", b"DENY"),
                    ]
                message = {**message, "headers": headers}
            await send(message)

        if not (self.directory / "index.html").is_file():
            if path != "/" and not accepts_html(scope):
                raise HTTPException(404)
            response = HTMLResponse(not_built_page(self.directory), status_code=503)
            await response(scope, receive, with_headers)
            return
        compressed = await run_in_threadpool(self._precompressed, path, accepted_encodings(scope))
        if compressed is not None:
            await compressed(scope, receive, with_headers)
            return
        await self.files(scope, receive, with_headers)

    def _precompressed(self, path: str, accepted: set[str]) -> FileResponse | None:
        """The precompressed copy of the file at ``path`` that the request accepts
        (a folder: its ``index.html``); None to serve the file as it is."""
        wanted = [(coding, suffix) for coding, suffix in ENCODINGS if coding in accepted]
        if not wanted:
            return None
        relative = path.lstrip("/")
        full, found = self.files.lookup_path(relative)
        if found is not None and stat.S_ISDIR(found.st_mode):
            relative = f"{relative.rstrip('/')}/index.html".lstrip("/")
            full, found = self.files.lookup_path(relative)
        if found is None or not stat.S_ISREG(found.st_mode):
            return None
        media_type = mimetypes.guess_type(full)[0] or "application/octet-stream"
        if media_type.startswith("text/") or media_type in ("application/javascript",):
            media_type += "; charset=utf-8"
        for coding, suffix in wanted:
            copy, copied = self.files.lookup_path(relative + suffix)
            if copied is not None and stat.S_ISREG(copied.st_mode):
                return FileResponse(
                    copy,
                    stat_result=copied,
                    media_type=media_type,
                    headers={"Content-Encoding": coding},
                )
        return None


def mount(app: FastAPI, settings: Settings) -> None:
    """Serve the web UI at ``/``; call after every API route is included."""
    app.mount("/", WebUI(settings), name="web")

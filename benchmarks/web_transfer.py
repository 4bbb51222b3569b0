"""What a page of the web UI costs to load over ``keiri-agent serve`` (issue 34, item 7):
for each page, the HTML and every script and stylesheet it names, fetched from a real
``keiri-agent serve`` process on loopback the way a browser does — once without
compression (the baseline, ``Accept-Encoding: identity``) and once as Chromium asks
(``gzip, deflate, br, zstd``), counting the bytes that travel. Prints per page:

- ``web.<page>.identity_kb`` / ``web.<page>.compressed_kb`` and their ratio
  ``web.<page>.compressed_over_identity`` (the precompressed Brotli copies of
  ``web/scripts/compress.mjs``; 1.0 means nothing was compressed);
- ``web.<page>.html_ms`` — the page's HTML, request to last byte (median of 5);
- ``web.asset_cache_control`` — what a hashed asset says about caching.

Needs the built export (``make web``). Run: ``.venv/bin/python benchmarks/web_transfer.py``.
"""

from __future__ import annotations

import http.client
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_load import serve

PAGES = (
    "/",
    "/sessions/",
    "/helpdesk/",
    "/analysis/",
    "/design/",
    "/plans/",
    "/schedules/",
    "/approvals/",
    "/history/",
    "/audit/",
)
BROWSER = "gzip, deflate, br, zstd"
ASSET = re.compile(r'(?:src|href)="(/_next/static/[^"]+\.(?:js|css))"')


def fetch(port: int, path: str, encoding: str) -> tuple[int, dict[str, str]]:
    """Bytes on the wire of ``path`` and the response headers."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Accept-Encoding": encoding})
        response = connection.getresponse()
        body = response.read()
        return len(body), {key.lower(): value for key, value in response.getheaders()}
    finally:
        connection.close()


def html(port: int, path: str) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Accept-Encoding": "identity"})
        return connection.getresponse().read().decode("utf-8")
    finally:
        connection.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, serve(Path(folder), {}) as (url, _pid):
        port = urlsplit(url).port or 80
        cache = ""
        for page in PAGES:
            assets = sorted(set(ASSET.findall(html(port, page))))
            sizes = {}
            for encoding in ("identity", BROWSER):
                total = fetch(port, page, encoding)[0]
                for asset in assets:
                    size, headers = fetch(port, asset, encoding)
                    total += size
                    cache = headers.get("cache-control", "")
                sizes[encoding] = total
            timings = []
            for _ in range(5):
                started = time.perf_counter()
                fetch(port, page, BROWSER)
                timings.append((time.perf_counter() - started) * 1000)
            name = page.strip("/") or "research"
            print(f"web.{name}.assets: {len(assets)}")
            print(f"web.{name}.identity_kb: {sizes['identity'] / 1024:.1f}")
            print(f"web.{name}.compressed_kb: {sizes[BROWSER] / 1024:.1f}")
            print(f"web.{name}.compressed_over_identity: {sizes[BROWSER] / sizes['identity']:.3f}")
            print(f"web.{name}.html_ms: {statistics.median(timings):.1f}")
        print(f"web.asset_cache_control: {cache}")


if __name__ == "__main__":
    main()

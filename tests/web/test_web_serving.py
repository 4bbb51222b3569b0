"""``keiri-agent serve`` serves the web UI's static export at ``/`` (issue 14, item 1):
pages, assets, security headers, the API's priority and JSON 404, the "not built" page,
path traversal refused."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_support import LiveServer

from keiri_agent.api.app import create_app
from keiri_agent.api.web import default_web_dir
from keiri_agent.config import Settings


def _export(root: Path) -> Path:
    """A folder shaped like ``web/out`` of a Next.js static export."""
    out = root / "out"
    (out / "sessions").mkdir(parents=True)
    (out / "_next" / "static" / "chunks").mkdir(parents=True)
    (out / "index.html").write_text(
        "<!doctype html><html lang=ja><body>調査ページ</body></html>", encoding="utf-8"
    )
    (out / "sessions" / "index.html").write_text(
        "<!doctype html><html lang=ja><body>セッション一覧</body></html>", encoding="utf-8"
    )
    (out / "404.html").write_text("<html><body>ページがありません</body></html>", "utf-8")
    (out / "_next" / "static" / "chunks" / "app.js").write_text("console.log(1);\n")
    (root / "secret.txt").write_text("not for the web\n")
    return out


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings(
        home=tmp_path / "home",
        provider="offline",
        web_dir=_export(tmp_path),
        api_cors_origins=("http://localhost:3000",),
    )
    live = LiveServer(create_app(settings)).start()
    yield live
    live.stop()


def test_the_pages_and_assets_of_the_export_are_served(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url) as client:
        root = client.get("/")
        sessions = client.get("/sessions/")
        script = client.get("/_next/static/chunks/app.js")

    assert root.status_code == 200 and "調査ページ" in root.text
    assert root.headers["content-type"].startswith("text/html")
    assert sessions.status_code == 200 and "セッション一覧" in sessions.text
    assert script.status_code == 200
    assert script.headers["content-type"].split(";")[0] in (
        "text/javascript",
        "application/javascript",
    )
    assert script.headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" not in script.headers


def test_html_carries_a_content_security_policy_and_no_framing(server: LiveServer) -> None:
    response = httpx.get(server.url + "/")

    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self' 'unsafe-inline'" in policy
    assert "frame-ancestors 'none'" in policy
    assert "connect-src 'self' http://localhost:3000" in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_the_api_keeps_priority_and_its_unknown_paths_stay_json_404(
    server: LiveServer,
) -> None:
    with httpx.Client(base_url=server.url) as client:
        health = client.get("/api/health")
        nope = client.get("/api/nope")
        graphql_nope = client.get("/graphql/nope")
        docs = client.get("/openapi.json")
        posted = client.post("/sessions/", json={})  # no route takes a POST outside the API

    assert posted.status_code == 404 and posted.json()["error"]["code"] == "NOT_FOUND"
    assert health.status_code == 200 and health.json()
    assert nope.status_code == 404
    assert nope.json()["error"]["code"] == "NOT_FOUND"
    assert graphql_nope.status_code == 404 and graphql_nope.json()["error"]
    assert docs.status_code == 200 and docs.json()["openapi"]


def test_an_unknown_page_is_the_exports_404_page_for_a_browser_and_json_otherwise(
    server: LiveServer,
) -> None:
    browser = httpx.get(server.url + "/no-such-page", headers={"Accept": "text/html"})
    script = httpx.get(server.url + "/etc/passwd")

    assert browser.status_code == 404
    assert "ページがありません" in browser.text
    assert script.status_code == 404
    assert script.json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    "path", ["/..%2f..%2fetc/passwd", "/../secret.txt", "/..%2fsecret.txt", "/%2e%2e/secret.txt"]
)
def test_paths_that_leave_the_export_are_refused(server: LiveServer, path: str) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("GET", path)  # sent as is (httpx would normalise the dots)
    response = connection.getresponse()
    body = response.read().decode("utf-8", "replace")
    connection.close()

    assert response.status in (400, 404)
    assert "root:" not in body and "not for the web" not in body


def test_a_missing_export_answers_a_japanese_page_saying_how_to_build_it(
    tmp_path: Path,
) -> None:
    settings = Settings(home=tmp_path, provider="offline", web_dir=tmp_path / "nowhere")
    live = LiveServer(create_app(settings)).start()
    try:
        root = httpx.get(live.url + "/")
        page = httpx.get(live.url + "/sessions/", headers={"Accept": "text/html,*/*"})
        script = httpx.get(live.url + "/etc/passwd")
        api = httpx.get(live.url + "/api/nope")
    finally:
        live.stop()

    assert root.status_code == 503
    assert root.headers["content-type"].startswith("text/html")
    assert "Web 画面がまだ作成されていません" in root.text
    assert "cd web &amp;&amp; npm ci &amp;&amp; npm run build" in root.text
    assert "content-security-policy" in root.headers
    assert page.status_code == 503 and "make web" in page.text
    assert script.status_code == 404 and script.json()["error"]["code"] == "NOT_FOUND"
    assert api.json()["error"]["code"] == "NOT_FOUND"


def test_the_default_export_is_the_repositorys_web_out() -> None:
    assert default_web_dir() == Path(__file__).resolve().parents[2] / "web" / "out"


def test_precompressed_copies_are_sent_to_browsers_that_accept_them(
    tmp_path: Path,
) -> None:
    import gzip

    out = _export(tmp_path)
    script = out / "_next" / "static" / "chunks" / "app.js"
    script.write_text("console.log('経理');\n" * 200, encoding="utf-8")
    script.with_name("app.js.gz").write_bytes(gzip.compress(script.read_bytes()))
    page = out / "sessions" / "index.html"
    (out / "sessions" / "index.html.gz").write_bytes(gzip.compress(page.read_bytes()))
    live = LiveServer(
        create_app(Settings(home=tmp_path / "home", provider="offline", web_dir=out))
    ).start()
    try:
        with httpx.Client(base_url=live.url) as client:  # decodes gzip itself
            zipped = client.get("/_next/static/chunks/app.js", headers={"Accept-Encoding": "gzip"})
            plain = client.get(
                "/_next/static/chunks/app.js", headers={"Accept-Encoding": "identity"}
            )
            refused = client.get(
                "/_next/static/chunks/app.js", headers={"Accept-Encoding": "gzip;q=0"}
            )
            html = client.get("/sessions/", headers={"Accept-Encoding": "br, gzip"})
            raw = http.client.HTTPConnection("127.0.0.1", live.port)
            raw.request("GET", "/_next/static/chunks/app.js", headers={"Accept-Encoding": "gzip"})
            on_the_wire = raw.getresponse().read()
            raw.close()
    finally:
        live.stop()

    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.content == plain.content == script.read_bytes()
    assert len(on_the_wire) < len(script.read_bytes()) / 5  # what travels is the copy
    assert zipped.headers["content-type"].split(";")[0] in (
        "text/javascript",
        "application/javascript",
    )
    assert zipped.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert zipped.headers["vary"] == "Accept-Encoding"
    assert "content-encoding" not in plain.headers and "content-encoding" not in refused.headers
    assert html.headers["content-encoding"] == "gzip" and "セッション一覧" in html.text
    assert html.headers["cache-control"] == "no-cache"
    assert html.headers["content-type"].startswith("text/html")
    assert "content-security-policy" in html.headers

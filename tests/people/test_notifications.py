"""Approval notices through a chat webhook (a loopback HTTP server) and e-mail (a
loopback SMTP server, aiosmtpd): what they say, and that a failing server is logged
without the webhook's secret URL and never raised."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from email import message_from_bytes
from email.header import decode_header, make_header
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from pydantic import SecretStr

from keiri_agent.config import Settings
from keiri_agent.people.notifications import Notifier


class _Hook(BaseHTTPRequestHandler):
    received: list[dict[str, Any]]
    status = 200

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append(json.loads(body))
        self.send_response(self.status)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict[str, Any]], type[_Hook]]]:
    handler = type("Hook", (_Hook,), {"received": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook/T0KEN", handler.received, handler
    server.shutdown()


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append((envelope.rcpt_tos, message_from_bytes(envelope.content)))
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[int, _Inbox]]:
    inbox = _Inbox()
    with socket.socket() as probe:  # a free port (the controller checks it by connecting)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield port, inbox
    controller.stop()


def test_a_waiting_approval_is_told_in_the_chat_with_where_to_answer(
    tmp_path: Path, webhook: tuple[str, list[dict[str, Any]], type[_Hook]]
) -> None:
    url, received, _ = webhook
    settings = Settings(
        home=tmp_path, notify_webhook_url=SecretStr(url), public_url="https://keiri.example.jp/"
    )
    thread = Notifier(settings).approval_waiting(
        run_id="run_1",
        title="支払の承認",
        step="支払一覧の承認",
        started_by="yamada",
        message="確認してください",
    )
    assert thread is not None
    thread.join(15)
    (notice,) = received
    assert notice["text"].startswith("【承認待ち】支払の承認（ステップ: 支払一覧の承認）")
    assert "開始した人: yamada" in notice["text"]
    assert "https://keiri.example.jp/approvals/" in notice["text"]


def test_a_notice_is_mailed_to_the_configured_recipients(
    tmp_path: Path, smtp: tuple[int, _Inbox]
) -> None:
    port, inbox = smtp
    settings = Settings(
        home=tmp_path,
        notify_smtp_host="127.0.0.1",
        notify_smtp_port=port,
        notify_smtp_starttls=False,
        notify_email_from="keiri@example.jp",
        notify_email_to="sato@example.jp,approvers@example.jp",
    )
    thread = Notifier(settings).approval_refused(
        run_id="run_1", title="支払の承認", started_by="yamada", comment="金額が違います"
    )
    assert thread is not None
    thread.join(15)
    ((recipients, mail),) = inbox.messages
    assert recipients == ["sato@example.jp", "approvers@example.jp"]
    assert str(make_header(decode_header(mail["Subject"]))) == "差戻し: 支払の承認"
    assert "金額が違います" in mail.get_payload(decode=True).decode("utf-8")


def test_nothing_configured_sends_nothing(tmp_path: Path) -> None:
    notifier = Notifier(Settings(home=tmp_path))
    assert not notifier.configured
    assert (
        notifier.approval_waiting(run_id="r", title="t", step="s", started_by="", message="")
        is None
    )


def test_a_failing_chat_server_is_logged_without_its_secret_url(
    tmp_path: Path,
    webhook: tuple[str, list[dict[str, Any]], type[_Hook]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    url, _, handler = webhook
    handler.status = 404
    settings = Settings(home=tmp_path, notify_webhook_url=SecretStr(url))
    with caplog.at_level(logging.WARNING, logger="keiri_agent.people.notifications"):
        thread = Notifier(settings).approval_waiting(
            run_id="run_2", title="t", step="s", started_by="", message=""
        )
        assert thread is not None
        thread.join(15)
    assert "run run_2: chat notice not sent" in caplog.text
    assert "T0KEN" not in caplog.text


PLAN = """\
apiVersion: v1
id: payments
version: 0.1.0
title: 支払の承認
graph:
  - id: approve
    block: ui.interactive_input
    title: 支払一覧の承認
    in:
      mode: confirm
      message: 今月の支払一覧を確認してください
      approval: {roles: [approver], not_starter: true}
    out: {approved: approved}
"""


def test_a_plan_run_tells_when_it_waits_for_approval_and_when_it_is_sent_back(
    tmp_path: Path, webhook: tuple[str, list[dict[str, Any]], type[_Hook]]
) -> None:
    import time

    from keiri_agent.people.roles import Person
    from keiri_agent.plans.dsl.loader import check_plan_text
    from keiri_agent.services.container import Services

    url, received, _ = webhook
    services = Services(Settings(home=tmp_path, notify_webhook_url=SecretStr(url)))
    try:
        runs = services.plan_runs
        plan = check_plan_text(PLAN).plan
        assert plan is not None
        run_id = runs.start(plan, started_by="yamada")
        deadline = time.monotonic() + 30
        while len(received) < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert received[0]["text"].startswith("【承認待ち】支払の承認（ステップ: 支払一覧の承認）")
        assert "今月の支払一覧を確認してください" in received[0]["text"]

        sato = Person("sato", "佐藤", frozenset({"approver"}))
        runs.resume(run_id, {"approve": {"approved": False, "comment": "金額が違います"}}, by=sato)
        while len(received) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert received[1]["text"].startswith("【差戻し】支払の承認")
        assert "コメント: 金額が違います" in received[1]["text"]
    finally:
        services.close()

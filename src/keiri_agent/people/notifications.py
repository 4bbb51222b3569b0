"""Telling people that a run waits for them (issue 33): an optional chat webhook and
optional e-mail, configured by settings (``notify_*``).

    notifier = Notifier(settings)
    notifier.approval_waiting(run_id=..., title="支払の承認", step="支払一覧の承認",
                              started_by="yamada", message="…")

A notice is a short Japanese text: what waits, who started it, where to answer (the
web UI's 承認待ち page under ``public_url``). It never holds what is approved (the
table, the file): only those signed in see that. Sending happens on a daemon thread
with a time limit, so a slow or unreachable chat or mail server never holds up a run;
a failure is logged (masked) and the run goes on — the 承認待ち page still lists it.

Chat: one JSON POST ``{"text": …}``, which Slack, Microsoft Teams (workflows) and
Google Chat incoming webhooks all accept. E-mail: SMTP with STARTTLS by default.
"""

from __future__ import annotations

import logging
import smtplib
import threading
from email.message import EmailMessage

import httpx

from keiri_agent.config import Settings
from keiri_agent.masking import mask_text

log = logging.getLogger(__name__)

TIMEOUT_S = 10.0
"""The longest a chat or mail server may take to accept a notice."""


class Notifier:
    """Sends notices through what the settings configure (nothing when neither is)."""

    def __init__(self, settings: Settings) -> None:
        self.api = settings.api

    @property
    def configured(self) -> bool:
        return self.api.notify_webhook_url is not None or self._email_configured

    @property
    def _email_configured(self) -> bool:
        return bool(
            self.api.notify_smtp_host and self.api.notify_email_from and self.api.notify_email_to
        )

    def approval_waiting(
        self, *, run_id: str, title: str, step: str, started_by: str, message: str
    ) -> threading.Thread | None:
        """Tell the approvers a run waits at an approval step; the sending thread (None
        when nothing is configured)."""
        where = self._approvals_url()
        text = (
            f"【承認待ち】{title}（ステップ: {step}）\n"
            f"開始した人: {started_by or '（記録なし）'}\n"
            + (f"{message}\n" if message else "")
            + (
                f"承認・差戻しはこちら: {where}"
                if where
                else "経理エージェントの「承認待ち」から承認・差戻しをしてください"
            )
        )
        return self._send(f"承認待ち: {title}", text, run_id)

    def approval_refused(
        self, *, run_id: str, title: str, started_by: str, comment: str
    ) -> threading.Thread | None:
        """Tell the starter (through the same channels) that the run was sent back."""
        text = (
            f"【差戻し】{title}\n"
            f"開始した人: {started_by or '（記録なし）'}\n"
            f"コメント: {comment or '（なし）'}\n"
            "内容を直してから、もう一度実行してください。"
        )
        return self._send(f"差戻し: {title}", text, run_id)

    def _approvals_url(self) -> str:
        base = (self.api.public_url or "").rstrip("/")
        return f"{base}/approvals/" if base else ""

    def _send(self, subject: str, text: str, run_id: str) -> threading.Thread | None:
        if not self.configured:
            return None
        thread = threading.Thread(
            target=self._deliver, args=(subject, text, run_id), name="notify", daemon=True
        )
        thread.start()
        return thread

    def _deliver(self, subject: str, text: str, run_id: str) -> None:
        if self.api.notify_webhook_url is not None:
            try:
                response = httpx.post(
                    self.api.notify_webhook_url.get_secret_value(),
                    json={"text": text},
                    timeout=TIMEOUT_S,
                )
                response.raise_for_status()
            except httpx.HTTPError as error:
                log.warning("run %s: chat notice not sent: %s", run_id, mask_text(str(error)))
        if self._email_configured:
            try:
                self._mail(subject, text)
            except (OSError, smtplib.SMTPException) as error:
                log.warning("run %s: e-mail notice not sent: %s", run_id, mask_text(str(error)))

    def _mail(self, subject: str, text: str) -> None:
        api = self.api
        assert api.notify_smtp_host and api.notify_email_from
        mail = EmailMessage()
        mail["Subject"] = subject
        mail["From"] = api.notify_email_from
        mail["To"] = ", ".join(api.notify_email_to)
        mail.set_content(text)
        with smtplib.SMTP(api.notify_smtp_host, api.notify_smtp_port, timeout=TIMEOUT_S) as smtp:
            if api.notify_smtp_starttls:
                smtp.starttls()
            if api.notify_smtp_user and api.notify_smtp_password is not None:
                smtp.login(api.notify_smtp_user, api.notify_smtp_password.get_secret_value())
            smtp.send_message(mail)

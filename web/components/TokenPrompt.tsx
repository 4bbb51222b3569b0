"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { getToken, onUnauthorized, setToken } from "@/lib/api";
import { loadHealth } from "@/lib/health";

/**
 * Asks for the API token when the server requires one (GET /api/health says token_required, or any
 * call answered 401). The token is kept in sessionStorage only: closing the tab forgets it.
 */
export default function TokenPrompt() {
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState("");
  const [rejected, setRejected] = useState(false);
  const dialogRef = useRef<HTMLDialogElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);

  const ask = useCallback(() => {
    // A 401 although a token was stored: the token is wrong.
    setRejected(getToken() !== null);
    setToken(null);
    setOpen(true);
  }, []);

  useEffect(() => {
    onUnauthorized(ask);
    let cancelled = false;
    loadHealth()
      .then((health) => {
        if (!cancelled && health.token_required && !getToken()) setOpen(true);
      })
      .catch(() => {
        // The pages show a network failure themselves when they call the API.
      });
    return () => {
      cancelled = true;
      onUnauthorized(null);
    };
  }, [ask]);

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      dialog.showModal();
      inputRef.current?.focus();
    } else if (!open && dialog.open) {
      dialog.close();
    }
  }, [open]);

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    const token = value.trim();
    if (!token) return;
    setToken(token);
    setValue("");
    setOpen(false);
    window.location.reload();
  };

  return (
    <dialog
      ref={dialogRef}
      className="token-dialog"
      aria-labelledby="token-title"
      onCancel={(event) => event.preventDefault()}
      data-testid="token-dialog"
    >
      <form onSubmit={submit}>
        <h2 id="token-title">アクセストークンの入力</h2>
        <p>
          このサーバーはアクセストークンが必要です。管理者から受け取ったトークン（サーバーの
          KEIRI_AGENT_API_TOKEN）を入力してください。トークンはこのタブを閉じるまでだけ保存されます。
        </p>
        {rejected ? (
          <p className="error-message" role="alert">
            トークンが正しくありません。入力し直してください。
          </p>
        ) : null}
        <label htmlFor="token-input">トークン</label>
        <input
          id="token-input"
          ref={inputRef}
          type="password"
          autoComplete="off"
          value={value}
          onChange={(event) => setValue(event.target.value)}
          data-testid="token-input"
        />
        <div className="actions">
          <button type="submit" className="primary" disabled={!value.trim()} data-testid="token-submit">
            保存して続ける
          </button>
        </div>
      </form>
    </dialog>
  );
}

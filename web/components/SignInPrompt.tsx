"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { apiUrl, getToken, onUnauthorized, setToken, toApiError, type ApiError } from "@/lib/api";
import { loadHealth, type Health } from "@/lib/health";
import { loadMe, OIDC_START, signIn } from "@/lib/people";

/**
 * Asks who is using the page when the server needs to know (GET /api/health says token_required and
 * GET /api/auth/me does not know the browser yet, or any call answered 401): a login and password
 * when people are registered, the company's sign-in when one is configured, an access token for a
 * shared or personal token. A sign-in is kept by the server in a cookie until it expires or the
 * person signs out; a token is kept in sessionStorage only (closing the tab forgets it).
 */
export default function SignInPrompt() {
  const [open, setOpen] = useState(false);
  const [health, setHealth] = useState<Health | null>(null);
  const [rejected, setRejected] = useState(false);
  const dialogRef = useRef<HTMLDialogElement>(null);

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
      .then(async (found) => {
        if (cancelled) return;
        setHealth(found);
        if (!found.token_required || getToken()) return;
        try {
          await loadMe();
        } catch {
          if (!cancelled) setOpen(true);
        }
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
    if (open && !dialog.open) dialog.showModal();
    else if (!open && dialog.open) dialog.close();
  }, [open]);

  const people = health?.password_sign_in === true;
  const company = health?.oidc_sign_in === true;
  return (
    <dialog
      ref={dialogRef}
      className="token-dialog"
      aria-labelledby="sign-in-title"
      onCancel={(event) => event.preventDefault()}
      data-testid="token-dialog"
    >
      <h2 id="sign-in-title">{people || company ? "サインイン" : "アクセストークンの入力"}</h2>
      {people ? <PasswordForm /> : null}
      {company ? (
        <p>
          <a className="button primary" href={apiUrl(OIDC_START)} data-testid="oidc-sign-in">
            会社のアカウントでサインイン
          </a>
        </p>
      ) : null}
      {people || company ? (
        <details>
          <summary>アクセストークンで続ける（システム連携用）</summary>
          <TokenForm rejected={rejected} />
        </details>
      ) : (
        <TokenForm rejected={rejected} />
      )}
    </dialog>
  );
}

function PasswordForm() {
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(login.trim(), password);
      window.location.reload();
    } catch (cause) {
      setError(toApiError(cause));
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(event) => void submit(event)} data-testid="sign-in-form">
      <p>管理者に登録してもらったログイン名とパスワードを入力してください。</p>
      {error ? (
        <div className="error-box" role="alert" data-testid="sign-in-error">
          <p className="error-message">{error.message}</p>
          {error.hint ? <p className="error-hint">{error.hint}</p> : null}
        </div>
      ) : null}
      <label htmlFor="sign-in-login">ログイン名</label>
      <input
        id="sign-in-login"
        autoComplete="username"
        value={login}
        onChange={(event) => setLogin(event.target.value)}
        data-testid="sign-in-login"
      />
      <label htmlFor="sign-in-password">パスワード</label>
      <input
        id="sign-in-password"
        type="password"
        autoComplete="current-password"
        value={password}
        onChange={(event) => setPassword(event.target.value)}
        data-testid="sign-in-password"
      />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !login.trim() || !password} data-testid="sign-in-submit">
          サインイン
        </button>
      </div>
    </form>
  );
}

function TokenForm({ rejected }: { rejected: boolean }) {
  const [value, setValue] = useState("");

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    const token = value.trim();
    if (!token) return;
    setToken(token);
    setValue("");
    window.location.reload();
  };

  return (
    <form onSubmit={submit}>
      <p>
        管理者から受け取ったアクセストークン（共有トークン、または keiri-agent users token で発行した個人用トークン）を
        入力してください。トークンはこのタブを閉じるまでだけ保存されます。
      </p>
      {rejected ? (
        <p className="error-message" role="alert">
          トークンが正しくありません。入力し直してください。
        </p>
      ) : null}
      <label htmlFor="token-input">トークン</label>
      <input
        id="token-input"
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
  );
}

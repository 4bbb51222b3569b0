// The one way the pages talk to the API: base URL, bearer token, the API's error shape.

export const TOKEN_KEY = "keiri-agent.api-token";

/** The API's base URL ("" = the origin that served the page, as under `keiri-agent serve`). */
export function apiBase(): string {
  return (process.env.NEXT_PUBLIC_API_BASE ?? "").replace(/\/+$/, "");
}

export function apiUrl(path: string): string {
  if (/^https?:\/\//.test(path)) return path;
  return `${apiBase()}${path.startsWith("/") ? path : `/${path}`}`;
}

/** An error the API answered ({"error": {code, message, hint, details}}) or a network failure. */
export class ApiError extends Error {
  readonly code: string;
  readonly hint: string;
  readonly status: number;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, hint: string, status: number, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.hint = hint;
    this.status = status;
    this.details = details;
  }
}

export const NETWORK_ERROR_MESSAGE = "サーバーに接続できません。";
export const NETWORK_ERROR_HINT =
  "keiri-agent serve が起動しているか、ネットワークがつながっているかを確かめてから、もう一度お試しください。";

export function networkError(): ApiError {
  return new ApiError("NETWORK_ERROR", NETWORK_ERROR_MESSAGE, NETWORK_ERROR_HINT, 0);
}

export function getToken(): string | null {
  if (typeof window === "undefined") return null;
  try {
    return window.sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null): void {
  if (typeof window === "undefined") return;
  if (token) window.sessionStorage.setItem(TOKEN_KEY, token);
  else window.sessionStorage.removeItem(TOKEN_KEY);
}

type UnauthorizedHandler = () => void;
let unauthorizedHandler: UnauthorizedHandler | null = null;

/** The token prompt registers itself here; a 401 from any call opens it. */
export function onUnauthorized(handler: UnauthorizedHandler | null): void {
  unauthorizedHandler = handler;
}

/** Tell the registered handler that the API answered 401. */
export function onUnauthorizedNotify(): void {
  unauthorizedHandler?.();
}

/**
 * The headers of every API call: the token, and Accept-Language: ja — the page is Japanese, so
 * the API's messages must be too, whatever language the browser ranks first.
 */
export function authHeaders(extra?: HeadersInit): Headers {
  const headers = new Headers(extra);
  if (!headers.has("Accept-Language")) headers.set("Accept-Language", "ja");
  const token = getToken();
  if (token && !headers.has("Authorization")) headers.set("Authorization", `Bearer ${token}`);
  const csrf = csrfToken();
  if (csrf && !headers.has(CSRF_HEADER)) headers.set(CSRF_HEADER, csrf);
  return headers;
}

/** The cookie a password or company sign-in sets for the page's script (api/security.py). */
export const CSRF_COOKIE = "keiri_csrf";
export const CSRF_HEADER = "X-CSRF-Token";

/** The signed-in browser's CSRF token (sent back on every request), or null. */
export function csrfToken(cookies: string = typeof document === "undefined" ? "" : document.cookie): string | null {
  for (const part of cookies.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === CSRF_COOKIE && value.length > 0) return decodeURIComponent(value.join("="));
  }
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Turn an error response into an ApiError (the API's shape, or a Japanese fallback). */
export async function errorFromResponse(response: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const error = isRecord(body) && isRecord(body.error) ? body.error : null;
  if (error && typeof error.message === "string") {
    return new ApiError(
      typeof error.code === "string" ? error.code : "ERROR",
      error.message,
      typeof error.hint === "string" ? error.hint : "",
      response.status,
      isRecord(error.details) ? error.details : {},
    );
  }
  return new ApiError(
    "HTTP_ERROR",
    `サーバーがエラーを返しました (HTTP ${response.status})。`,
    "時間をおいてもう一度お試しください。続く場合は管理者に連絡してください。",
    response.status,
  );
}

/** fetch against the API; rejects with ApiError on an error answer or a network failure. */
export async function apiFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = authHeaders(init.headers);
  if (typeof init.body === "string" && !headers.has("Content-Type")) {
    headers.set("Content-Type", "application/json");
  }
  let response: Response;
  try {
    response = await fetch(apiUrl(path), { ...init, headers });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
    throw networkError();
  }
  if (response.status === 401) onUnauthorizedNotify();
  if (!response.ok) throw await errorFromResponse(response);
  return response;
}

/** apiFetch + JSON body. */
export async function apiJson<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await apiFetch(path, init);
  return (await response.json()) as T;
}

/** A GraphQL call; GraphQL errors become an ApiError with the server's message. */
export async function graphql<T>(query: string, variables: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
  const body = await apiJson<{ data?: T | null; errors?: { message?: string; extensions?: Record<string, unknown> }[] }>(
    "/graphql",
    { method: "POST", body: JSON.stringify({ query, variables }), signal },
  );
  const first = body.errors?.[0];
  if (first || !body.data) {
    const ext = first?.extensions ?? {};
    throw new ApiError(
      typeof ext.code === "string" ? ext.code : "GRAPHQL_ERROR",
      first?.message ?? "サーバーから結果が返りませんでした。",
      typeof ext.hint === "string" ? ext.hint : "入力を確かめて、もう一度お試しください。",
      200,
    );
  }
  return body.data;
}

/** A user-facing message for anything thrown. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(
    "UNEXPECTED",
    "予期しないエラーが起きました。",
    "ページを再読み込みして、もう一度お試しください。",
    0,
  );
}

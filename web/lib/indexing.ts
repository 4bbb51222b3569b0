// Indexing with its progress: POST …?stream=true answers SSE — index_started, index_progress per
// file (and per embedded batch of a long one: a CPU embeddings server takes minutes), then
// `result` holding the same JSON as the plain POST, or `error` in the API's error shape.

import { ApiError, apiUrl, authHeaders, errorFromResponse, networkError, onUnauthorizedNotify } from "@/lib/api";
import { SseParser } from "@/lib/sse";

/** One `index_progress` event: `done` of `total` files finished; the file being indexed. */
export interface IndexProgress {
  done: number;
  total: number;
  document: string;
}

/** The line a page shows for a progress event. */
export function progressLabel(progress: IndexProgress): string {
  const current = progress.document ? `（${progress.document}）` : "";
  return `${progress.done} / ${progress.total} 件の資料を登録しました${current}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function streamError(payload: unknown): ApiError {
  const error = isRecord(payload) && isRecord(payload.error) ? payload.error : {};
  return new ApiError(
    typeof error.code === "string" ? error.code : "ERROR",
    typeof error.message === "string" ? error.message : "資料の登録に失敗しました。",
    typeof error.hint === "string" ? error.hint : "",
    0,
    isRecord(error.details) ? error.details : {},
  );
}

/**
 * POST `path` asking for the progress stream; `onProgress` per progress event; resolves with the
 * `result` payload. Rejects with an ApiError: the API's error (HTTP or a `failed` event), a
 * network failure, or a stream that ended without a result.
 */
export async function postIndexing<T>(
  path: string,
  onProgress: (progress: IndexProgress) => void,
  init: RequestInit = {},
  fetchImpl: typeof fetch = fetch,
): Promise<T> {
  const url = `${path}${path.includes("?") ? "&" : "?"}stream=true`;
  let response: Response;
  try {
    response = await fetchImpl(apiUrl(url), {
      ...init,
      method: "POST",
      headers: authHeaders({ ...Object.fromEntries(new Headers(init.headers)), Accept: "text/event-stream" }),
    });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
    throw networkError();
  }
  if (response.status === 401) onUnauthorizedNotify();
  if (!response.ok) throw await errorFromResponse(response);
  if (!response.body) throw networkError();
  const parser = new SseParser();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    for (const message of parser.push(decoder.decode(value, { stream: true }))) {
      let event: unknown;
      try {
        event = JSON.parse(message.data);
      } catch {
        continue;
      }
      const payload = isRecord(event) ? event.payload : undefined;
      if (message.event === "index_progress" && isRecord(payload)) {
        onProgress({
          done: Number(payload.done) || 0,
          total: Number(payload.total) || 0,
          document: typeof payload.document === "string" ? payload.document : "",
        });
      } else if (message.event === "result") {
        return payload as T;
      } else if (message.event === "failed") {
        throw streamError(payload);
      } else if (message.event === "cancelled") {
        throw new ApiError("RUN_CANCELLED", "資料の登録は途中で中止されました。", "必要ならもう一度登録してください。", 0);
      }
    }
  }
  throw new ApiError(
    "STREAM_LOST",
    "資料の登録中にサーバーとの接続が切れました。",
    "登録はサーバーで続いている場合があります。しばらくしてからページを再読み込みし、登録済みの資料を確かめてください。",
    0,
  );
}

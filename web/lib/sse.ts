// Server-sent events over fetch streaming. EventSource cannot send an Authorization header,
// so the stream is read with fetch: the wire format is parsed here, a dropped connection is
// reconnected with Last-Event-ID, and the connection state is reported for the page to show.

import { ApiError, apiUrl, authHeaders, errorFromResponse, onUnauthorizedNotify } from "@/lib/api";

/** One event as it came over the wire. */
export interface SseMessage {
  /** The last `id:` seen on the stream (the SSE "last event ID"), or null before any. */
  id: string | null;
  /** `event:` (default "message"). */
  event: string;
  /** `data:` lines joined with "\n". */
  data: string;
}

/**
 * An incremental parser for the text/event-stream format: feed it decoded text in chunks of any
 * size (split mid-line, mid-field, between "\r" and "\n") and it returns the complete events.
 */
export class SseParser {
  private buffer = "";
  private pendingCR = false;
  private data: string[] = [];
  private hasData = false;
  private eventType = "";
  private lastId: string | null = null;
  /** The reconnection delay the server asked for with `retry:`, in ms. */
  retryMs: number | null = null;

  constructor(lastEventId: string | null = null) {
    this.lastId = lastEventId;
  }

  get lastEventId(): string | null {
    return this.lastId;
  }

  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (this.pendingCR && text.startsWith("\n")) text = text.slice(1);
    this.pendingCR = false;
    this.buffer += text;
    const messages: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (ch !== "\n" && ch !== "\r") continue;
      const line = this.buffer.slice(start, i);
      if (ch === "\r") {
        if (i + 1 < this.buffer.length) {
          if (this.buffer[i + 1] === "\n") i++;
        } else {
          this.pendingCR = true;
        }
      }
      start = i + 1;
      const message = this.line(line);
      if (message) messages.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return messages;
  }

  private line(line: string): SseMessage | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null; // a comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        this.hasData = true;
        break;
      case "event":
        this.eventType = value;
        break;
      case "id":
        if (!value.includes("\0")) this.lastId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break; // unknown fields are ignored, as the format says
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const hasData = this.hasData;
    const message: SseMessage = { id: this.lastId, event: this.eventType || "message", data: this.data.join("\n") };
    this.data = [];
    this.hasData = false;
    this.eventType = "";
    return hasData ? message : null;
  }
}

export type ConnectionState =
  | { status: "connecting" }
  | { status: "connected" }
  | { status: "reconnecting"; attempt: number; delayMs: number }
  | { status: "closed"; reason: "ended" | "cancelled" | "error" };

export interface StreamOptions {
  /** The stream's path under the API (e.g. the run's events_url) or an absolute URL. */
  url: string;
  /** Resume after this event id (sent as Last-Event-ID). */
  lastEventId?: string | null;
  onMessage: (message: SseMessage) => void;
  onState?: (state: ConnectionState) => void;
  /** Cancels the stream; the promise then resolves. */
  signal?: AbortSignal;
  /**
   * True for the event after which the server ends the stream. When given, a stream that ends
   * before such an event counted as a dropped connection (a proxy or a restart can close it
   * cleanly) and is resumed.
   */
  isFinal?: (message: SseMessage) => boolean;
  /** Reconnection attempts before giving up (default 6). */
  maxRetries?: number;
  /** First backoff delay (default 1000 ms), doubled per attempt up to maxDelayMs (default 16000 ms). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  fetchImpl?: typeof fetch;
}

export const STREAM_LOST_MESSAGE = "サーバーとの接続が切れ、再接続できませんでした。";
export const STREAM_LOST_HINT =
  "ネットワークとサーバーの状態を確かめてから、ページを再読み込みしてください。調査はサーバーで続いているので、結果は後から確認できます。";

/** The backoff before reconnection attempt n (1-based): 1 s, 2 s, 4 s … capped. */
export function backoffDelay(attempt: number, baseDelayMs = 1000, maxDelayMs = 16000): number {
  return Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, attempt - 1));
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === "AbortError";
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new DOMException("aborted", "AbortError"));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new DOMException("aborted", "AbortError"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

class Dropped extends Error {}

/**
 * Reads the stream until the server ends it normally (resolves), the signal cancels it
 * (resolves), or it fails: an error answer (4xx) rejects at once with the API's ApiError; a
 * dropped connection or a 5xx is retried with Last-Event-ID and backoff, and after maxRetries
 * failed attempts in a row rejects with a Japanese ApiError (STREAM_LOST).
 */
export async function streamSse(options: StreamOptions): Promise<void> {
  const {
    url,
    onMessage,
    onState = () => {},
    signal,
    isFinal,
    maxRetries = 6,
    baseDelayMs = 1000,
    maxDelayMs = 16000,
    fetchImpl = fetch,
  } = options;
  let lastEventId = options.lastEventId ?? null;
  let failures = 0;
  onState({ status: "connecting" });

  for (;;) {
    try {
      const parser = new SseParser(lastEventId);
      const headers = authHeaders({ Accept: "text/event-stream" });
      if (lastEventId !== null) headers.set("Last-Event-ID", lastEventId);
      let response: Response;
      try {
        response = await fetchImpl(apiUrl(url), { headers, signal, cache: "no-store" });
      } catch (error) {
        if (isAbort(error)) throw error;
        throw new Dropped();
      }
      if (!response.ok) {
        if (response.status >= 500) throw new Dropped();
        if (response.status === 401) onUnauthorizedNotify();
        throw await errorFromResponse(response);
      }
      if (!response.body) throw new Dropped();
      onState({ status: "connected" });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let finished = false;
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const message of parser.push(decoder.decode(value, { stream: true }))) {
            lastEventId = message.id ?? lastEventId;
            failures = 0; // progress made: a later drop starts the backoff afresh
            onMessage(message);
            if (isFinal?.(message)) finished = true;
          }
        }
      } catch (error) {
        if (isAbort(error) || signal?.aborted) throw new DOMException("aborted", "AbortError");
        throw new Dropped();
      }
      if (isFinal && !finished) throw new Dropped();
      onState({ status: "closed", reason: "ended" });
      return;
    } catch (error) {
      if (isAbort(error) || signal?.aborted) {
        onState({ status: "closed", reason: "cancelled" });
        return;
      }
      if (!(error instanceof Dropped)) {
        onState({ status: "closed", reason: "error" });
        throw error;
      }
      failures += 1;
      if (failures > maxRetries) {
        onState({ status: "closed", reason: "error" });
        throw new ApiError("STREAM_LOST", STREAM_LOST_MESSAGE, STREAM_LOST_HINT, 0);
      }
      const delayMs = backoffDelay(failures, baseDelayMs, maxDelayMs);
      onState({ status: "reconnecting", attempt: failures, delayMs });
      try {
        await sleep(delayMs, signal);
      } catch {
        onState({ status: "closed", reason: "cancelled" });
        return;
      }
    }
  }
}

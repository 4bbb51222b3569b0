import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/api";
import { backoffDelay, type ConnectionState, SseParser, type SseMessage, streamSse } from "@/lib/sse";

function feed(chunks: string[]): SseMessage[] {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

describe("SseParser", () => {
  it("parses id, event and data", () => {
    expect(feed(['id: 7\nevent: partial_summary\ndata: {"seq":7}\n\n'])).toEqual([
      { id: "7", event: "partial_summary", data: '{"seq":7}' },
    ]);
  });

  it("assembles events from chunks split mid-line, mid-field and between CR and LF", () => {
    const wire = 'id: 1\r\nevent: plan\r\ndata: {"a":"計画"}\r\n\r\nid: 2\nevent: hits\ndata: {"b":2}\n\n';
    const expected = [
      { id: "1", event: "plan", data: '{"a":"計画"}' },
      { id: "2", event: "hits", data: '{"b":2}' },
    ];
    for (let size = 1; size <= wire.length; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < wire.length; i += size) chunks.push(wire.slice(i, i + size));
      expect(feed(chunks)).toEqual(expected);
    }
  });

  it("ignores comments (keep-alive) and events without data", () => {
    expect(feed([": keep-alive\n\n", "event: x\n\n", ":another\ndata: y\n\n"])).toEqual([
      { id: null, event: "message", data: "y" },
    ]);
  });

  it("joins multi-line data with newlines and keeps the last id for later events", () => {
    expect(feed(["id: 3\ndata: first\ndata:second\ndata:  third\n\n", "data: next\n\n"])).toEqual([
      { id: "3", event: "message", data: "first\nsecond\n third" },
      { id: "3", event: "message", data: "next" },
    ]);
  });

  it("reads retry and does not dispatch an unfinished event", () => {
    const parser = new SseParser();
    expect(parser.push("retry: 2500\ndata: half")).toEqual([]);
    expect(parser.retryMs).toBe(2500);
    expect(parser.push("\n\n")).toEqual([{ id: null, event: "message", data: "half" }]);
  });
});

describe("backoffDelay", () => {
  it("doubles from 1 s and is capped", () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n))).toEqual([1000, 2000, 4000, 8000, 16000, 16000, 16000]);
  });
});

function streamOf(text: string, { drop = false }: { drop?: boolean } = {}): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  // split inside a multi-byte character on purpose
  const chunks = [bytes.slice(0, 5), bytes.slice(5)];
  return new ReadableStream({
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk) controller.enqueue(chunk);
      else if (drop) controller.error(new TypeError("network error"));
      else controller.close();
    },
  });
}

const event = (seq: number, kind: string) =>
  `id: ${seq}\nevent: ${kind}\ndata: {"kind":"${kind}","seq":${seq},"text":"段落"}\n\n`;

describe("streamSse", () => {
  it("reconnects after a dropped connection with Last-Event-ID and ends after the final event", async () => {
    const requests: (string | null)[] = [];
    const answers = [
      () => new Response(streamOf(event(1, "plan") + event(2, "hits"), { drop: true })),
      () => new Response(streamOf(event(3, "done"))),
    ];
    const fetchImpl = (async (_url: string, init: RequestInit) => {
      requests.push(new Headers(init.headers).get("Last-Event-ID"));
      const answer = answers.shift();
      if (!answer) throw new Error("too many requests");
      return answer();
    }) as unknown as typeof fetch;
    const messages: SseMessage[] = [];
    const states: ConnectionState[] = [];
    await streamSse({
      url: "/api/research/run_1/events",
      onMessage: (m) => messages.push(m),
      onState: (s) => states.push(s),
      isFinal: (m) => m.event === "done",
      baseDelayMs: 1,
      fetchImpl,
    });
    expect(requests).toEqual([null, "2"]);
    expect(messages.map((m) => m.id)).toEqual(["1", "2", "3"]);
    expect(messages[0]?.data).toContain("段落");
    expect(states).toContainEqual({ status: "reconnecting", attempt: 1, delayMs: 1 });
    expect(states.at(-1)).toEqual({ status: "closed", reason: "ended" });
  });

  it("treats a clean end before the final event as a drop", async () => {
    let calls = 0;
    const fetchImpl = (async () => {
      calls += 1;
      return new Response(streamOf(calls === 1 ? event(1, "plan") : event(2, "done")));
    }) as unknown as typeof fetch;
    await streamSse({ url: "/x", onMessage: () => {}, isFinal: (m) => m.event === "done", baseDelayMs: 1, fetchImpl });
    expect(calls).toBe(2);
  });

  it("gives up after maxRetries with a Japanese error", async () => {
    let calls = 0;
    const fetchImpl = (async () => {
      calls += 1;
      throw new TypeError("Failed to fetch");
    }) as unknown as typeof fetch;
    const states: ConnectionState[] = [];
    const promise = streamSse({ url: "/x", onMessage: () => {}, onState: (s) => states.push(s), maxRetries: 3, baseDelayMs: 1, fetchImpl });
    await expect(promise).rejects.toBeInstanceOf(ApiError);
    await expect(promise).rejects.toMatchObject({ code: "STREAM_LOST", message: expect.stringContaining("接続") });
    expect(calls).toBe(4);
    expect(states.filter((s) => s.status === "reconnecting").map((s) => (s.status === "reconnecting" ? s.attempt : 0))).toEqual([1, 2, 3]);
  });

  it("rejects at once with the API's error for a 4xx answer", async () => {
    const fetchImpl = (async () =>
      new Response(JSON.stringify({ error: { code: "NOT_FOUND", message: "調査が見つかりません", hint: "選び直してください" } }), {
        status: 404,
      })) as unknown as typeof fetch;
    await expect(streamSse({ url: "/x", onMessage: () => {}, fetchImpl })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: "調査が見つかりません",
      hint: "選び直してください",
    });
  });

  it("stops quietly when cancelled", async () => {
    const controller = new AbortController();
    const fetchImpl = (async () => {
      throw new TypeError("Failed to fetch");
    }) as unknown as typeof fetch;
    const states: ConnectionState[] = [];
    const promise = streamSse({
      url: "/x",
      onMessage: () => {},
      onState: (s) => {
        states.push(s);
        if (s.status === "reconnecting") controller.abort();
      },
      signal: controller.signal,
      baseDelayMs: 10_000,
      fetchImpl,
    });
    await expect(promise).resolves.toBeUndefined();
    expect(states.at(-1)).toEqual({ status: "closed", reason: "cancelled" });
  });
});

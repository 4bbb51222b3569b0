import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/api";
import { type IndexProgress, postIndexing, progressLabel } from "@/lib/indexing";

function sse(events: { event: string; payload: Record<string, unknown> }[]): string {
  return events.map((e, i) => `id: ${i + 1}\nevent: ${e.event}\ndata: ${JSON.stringify({ payload: e.payload })}\n\n`).join("");
}

function fakeFetch(body: string, status = 200): { fetch: typeof fetch; calls: [string, RequestInit][] } {
  const calls: [string, RequestInit][] = [];
  const impl = (async (url: string, init: RequestInit) => {
    calls.push([url, init]);
    // split mid-event: the parser must join the pieces
    const half = Math.floor(body.length / 2);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body.slice(0, half)));
        controller.enqueue(new TextEncoder().encode(body.slice(half)));
        controller.close();
      },
    });
    return new Response(stream, { status, headers: { "Content-Type": "text/event-stream" } });
  }) as unknown as typeof fetch;
  return { fetch: impl, calls };
}

describe("postIndexing", () => {
  it("reports each progress event and resolves with the result", async () => {
    const { fetch, calls } = fakeFetch(
      sse([
        { event: "index_started", payload: {} },
        { event: "index_progress", payload: { done: 0, total: 2, document: "manual.pdf（埋め込み 64/300 チャンク）" } },
        { event: "index_progress", payload: { done: 1, total: 2, document: "manual.pdf" } },
        { event: "result", payload: { manual: { added: ["manual.pdf"] } } },
      ]),
    );
    const seen: IndexProgress[] = [];
    const result = await postIndexing<{ manual: { added: string[] } }>("/api/helpdesk/kb/x/sample", (p) => seen.push(p), {}, fetch);
    expect(result.manual.added).toEqual(["manual.pdf"]);
    expect(seen.map((p) => p.done)).toEqual([0, 1]);
    expect(progressLabel(seen[0] as IndexProgress)).toBe("0 / 2 件の資料を登録しました（manual.pdf（埋め込み 64/300 チャンク））");
    const [url, init] = calls[0] ?? ["", {}];
    expect(url).toContain("/api/helpdesk/kb/x/sample?stream=true");
    expect(init.method).toBe("POST");
  });

  it("rejects with the server's error in Japanese", async () => {
    const { fetch } = fakeFetch(
      sse([{ event: "failed", payload: { status: "failed", error: { code: "LLM_ERROR", message: "埋め込みサービスが時間内に応答しませんでした", hint: "管理者に…" } } }]),
    );
    const failed = postIndexing("/api/research/sample", () => {}, {}, fetch);
    await expect(failed).rejects.toBeInstanceOf(ApiError);
    await expect(failed).rejects.toMatchObject({ code: "LLM_ERROR", message: "埋め込みサービスが時間内に応答しませんでした" });
  });

  it("says the connection was lost when the stream ends without a result", async () => {
    const { fetch } = fakeFetch(sse([{ event: "index_started", payload: {} }]));
    await expect(postIndexing("/api/research/sample", () => {}, {}, fetch)).rejects.toMatchObject({ code: "STREAM_LOST" });
  });
});

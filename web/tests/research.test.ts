import { describe, expect, it } from "vitest";
import {
  toSource,
  initialResearchState,
  parseResearchEvent,
  planSummary,
  type ResearchAction,
  type ResearchEvent,
  researchReducer,
  type ResearchState,
} from "@/lib/research";

const RUN = "run_abc";

function ev(seq: number, kind: string, payload: Record<string, unknown> = {}): ResearchEvent {
  return { source: "research", kind, run_id: RUN, seq, timestamp: "2026-11-26T00:00:00Z", payload };
}

const SOURCE_1 = { ref: "経理規程.md#3", text: "請求書には登録番号を記載する。", title: "経理規程", document: "経理規程.md", page: 2, heading: "請求書", url: null, score: 1, origin: "kb:research", source: "internal" };
const SOURCE_2 = { ref: "様式ガイド.pdf#1", text: "税率ごとに区分して記載する。", title: "様式ガイド", document: "様式ガイド.pdf", page: 5, heading: null, url: null, score: 0.5, origin: "kb:research", source: "internal" };

const FULL_RUN: ResearchEvent[] = [
  ev(1, "plan", { needs_research: true, reason: "制度の確認", queries: ["登録番号", "税率区分"], offline: true }),
  ev(2, "query_started", { step_no: 1, query: "登録番号" }),
  ev(3, "query_started", { step_no: 2, query: "税率区分" }),
  ev(4, "hits", { step_no: 2, query: "税率区分", count: 1, sources: ["様式ガイド.pdf p.5"] }),
  ev(5, "hits", { step_no: 1, query: "登録番号", count: 3, sources: ["経理規程.md p.2"] }),
  ev(6, "partial_summary", { step_no: 1, query: "登録番号", summary_md: "登録番号が必要[1]。" }),
  ev(7, "note_saved", { step_no: 1, query: "登録番号", note_id: 11 }),
  ev(8, "error", { step_no: 2, query: "税率区分", message: "要約が時間内に終わりませんでした", code: "TIMEOUT", error_type: "timeout" }),
  ev(9, "gap_check", { cycle: 1, missing: "", queries: [], checked: true }),
  ev(10, "report_chunk", { text: "## 結論\n\n" }),
  ev(11, "report_chunk", { text: "登録番号の記載が必要です[1][2]。\n" }),
  ev(12, "done", { session_id: "ses_1", needs_research: true, queries: ["登録番号", "税率区分"], note_count: 1, sources: [SOURCE_1, SOURCE_2], limitations: ["「税率区分」の要約は時間切れでした"], offline: true }),
];

function run(events: ResearchEvent[], state: ResearchState = started()): ResearchState {
  return events.reduce((s, event) => researchReducer(s, { type: "event", event }), state);
}

function started(): ResearchState {
  const action: ResearchAction = { type: "started", run: { runId: RUN, sessionId: "ses_1", eventsUrl: `/api/research/${RUN}/events`, question: "インボイス制度の変更点" } };
  return researchReducer(initialResearchState, action);
}

describe("researchReducer", () => {
  it("turns a full event sequence into the page state", () => {
    const state = run(FULL_RUN);
    expect(state.status).toBe("success");
    expect(state.plan).toEqual({ needsResearch: true, reason: "制度の確認", queries: ["登録番号", "税率区分"], offline: true });
    expect(state.queries).toEqual([
      { stepNo: 1, query: "登録番号", status: "saved", count: 3, summaryMd: "登録番号が必要[1]。", reused: false, skipReason: null, error: null },
      { stepNo: 2, query: "税率区分", status: "failed", count: 1, summaryMd: null, reused: false, skipReason: null, error: "要約が時間内に終わりませんでした" },
    ]);
    expect(state.stepErrors).toEqual(["要約が時間内に終わりませんでした"]);
    expect(state.gapChecks).toEqual([{ cycle: 1, missing: "", queries: [], checked: true }]);
    expect(state.reportMd).toBe("## 結論\n\n登録番号の記載が必要です[1][2]。\n");
    expect(state.sources.map((s) => [s.number, s.document, s.page, s.title])).toEqual([
      [1, "経理規程.md", 2, "経理規程"],
      [2, "様式ガイド.pdf", 5, "様式ガイド"],
    ]);
    expect(state.sources[0]?.text).toBe("請求書には登録番号を記載する。");
    expect(state.limitations).toEqual(["「税率区分」の要約は時間切れでした"]);
    expect(state.lastEventId).toBe(12);
    expect(state.gap).toBe(false);
    expect(state.error).toBeNull();
  });

  it("ignores events a resume repeats: the state equals an uninterrupted run's", () => {
    const uninterrupted = run(FULL_RUN);
    // the connection dropped after event 11; the events 10..12 arrived again (an overlap)
    const resumed = run([...FULL_RUN.slice(0, 11), ...FULL_RUN.slice(9)]);
    expect(resumed).toEqual(uninterrupted);
    expect(resumed.reportMd.match(/結論/g)).toHaveLength(1);
  });

  it("records a gap and applies later events; final replaces the report and clears it", () => {
    const withGap = run([...FULL_RUN.slice(0, 9), ...FULL_RUN.slice(10)]); // event 10 lost
    expect(withGap.gap).toBe(true);
    expect(withGap.lastEventId).toBe(12);
    expect(withGap.reportMd).toBe("登録番号の記載が必要です[1][2]。\n");
    const fixed = researchReducer(withGap, {
      type: "final",
      snapshot: {
        run_id: RUN,
        status: "success",
        result: { report_md: "## 結論\n\n登録番号の記載が必要です[1][2]。\n", sources: [{ number: 1, ...SOURCE_1 }, { number: 2, ...SOURCE_2 }], limitations: ["「税率区分」の要約は時間切れでした"], session_id: "ses_1" },
        error: null,
        last_event_id: 12,
      },
    });
    expect(fixed.gap).toBe(false);
    expect(fixed.reportMd).toBe(run(FULL_RUN).reportMd);
    expect(fixed.sources).toEqual(run(FULL_RUN).sources);
  });

  it("a failed run keeps its progress and shows the error with its hint", () => {
    const state = run([
      ...FULL_RUN.slice(0, 3),
      ev(4, "failed", { error: { code: "LLM_UNAVAILABLE", message: "言語モデルに接続できません", hint: "設定を確認してください" } }),
    ]);
    expect(state.status).toBe("failed");
    expect(state.error).toEqual({ code: "LLM_UNAVAILABLE", message: "言語モデルに接続できません", hint: "設定を確認してください" });
    expect(state.queries).toHaveLength(2);
  });

  it("a cancelled run ends as cancelled", () => {
    const state = run([...FULL_RUN.slice(0, 2), ev(3, "cancelled", { error: { code: "CANCELLED", message: "調査はキャンセルされました", hint: "" } })]);
    expect(state.status).toBe("cancelled");
    expect(state.error?.message).toBe("調査はキャンセルされました");
  });

  it("ignores another run's events and records the connection state", () => {
    const other = { ...ev(1, "report_chunk", { text: "別の調査" }), run_id: "run_other" };
    expect(run([other]).reportMd).toBe("");
    const state = researchReducer(started(), { type: "connection", state: { status: "reconnecting", attempt: 2, delayMs: 2000 } });
    expect(state.connection).toEqual({ status: "reconnecting", attempt: 2, delayMs: 2000 });
  });

  it("a new run starts from a clean state", () => {
    const after = researchReducer(run(FULL_RUN), { type: "started", run: { runId: "run_2", sessionId: "ses_1", eventsUrl: "/e", question: "次" } });
    expect(after.reportMd).toBe("");
    expect(after.lastEventId).toBe(0);
    expect(after.status).toBe("running");
  });
});

describe("steps that end without a note, and the query count", () => {
  // the plan has one query, the gap check adds two: three steps run; step 2 finds passages but
  // nothing relevant to summarise, step 3 finds nothing (the server closes both: step_skipped)
  const GROWN_RUN: ResearchEvent[] = [
    ev(1, "plan", { needs_research: true, reason: "", queries: ["登録番号"], offline: false }),
    ev(2, "query_started", { step_no: 1, query: "登録番号" }),
    ev(3, "hits", { step_no: 1, query: "登録番号", count: 2, sources: [] }),
    ev(4, "partial_summary", { step_no: 1, query: "登録番号", summary_md: "必要です[1]。" }),
    ev(5, "note_saved", { step_no: 1, query: "登録番号", note_id: 1 }),
    ev(6, "gap_check", { cycle: 1, missing: "端数と出張", queries: ["出張旅費", "該当なし"], checked: true }),
    ev(7, "query_started", { step_no: 2, query: "出張旅費" }),
    ev(8, "query_started", { step_no: 3, query: "該当なし" }),
    ev(9, "hits", { step_no: 2, query: "出張旅費", count: 4, sources: [] }),
    ev(10, "hits", { step_no: 3, query: "該当なし", count: 0, sources: [] }),
    ev(11, "step_skipped", { step_no: 3, query: "該当なし", count: 0, reason: "no_hits" }),
    ev(12, "step_skipped", { step_no: 2, query: "出張旅費", count: 4, reason: "no_summary" }),
    ev(13, "gap_check", { cycle: 2, missing: "", queries: [], checked: false }),
  ];

  it("closes a step that found passages but gave no summary, and one that found nothing", () => {
    const state = run(GROWN_RUN);
    expect(state.queries.map((q) => [q.stepNo, q.status, q.count, q.skipReason])).toEqual([
      [1, "saved", 2, null],
      [2, "skipped", 4, "no_summary"],
      [3, "skipped", 0, "no_hits"],
    ]);
    expect(state.queries.some((q) => q.status === "searching" || q.status === "found")).toBe(false);
  });

  it("counts the planned and the added queries in the header", () => {
    const state = run(GROWN_RUN);
    expect(state.plan && planSummary(state.plan, state.gapChecks)).toBe(
      "調査計画: クエリ 3 件（最初の計画 1 件、不足の確認で追加 2 件）",
    );
    const planned = run(FULL_RUN);
    expect(planned.plan && planSummary(planned.plan, planned.gapChecks)).toBe("調査計画（オフライン）: クエリ 2 件");
    const declined = { needsResearch: false, reason: "質問文だけで答えられます", queries: [], offline: false };
    expect(planSummary(declined, [])).toBe("詳細調査は不要です: 質問文だけで答えられます");
  });
});

describe("parseResearchEvent", () => {
  it("reads the API's event JSON and refuses other data", () => {
    expect(parseResearchEvent(JSON.stringify(ev(3, "hits", { count: 2 })))?.payload).toEqual({ count: 2 });
    expect(parseResearchEvent("not json")).toBeNull();
    expect(parseResearchEvent('{"kind":"hits"}')).toBeNull();
  });
});

describe("toSource", () => {
  it("keeps the row of an FAQ source (cited as 行N)", () => {
    const faq = toSource({ ref: "faq.csv#4", text: "Q: A", title: "faq.csv", document: "faq.csv", page: null, row: 4 }, 0);
    expect(faq.row).toBe(4);
    expect(toSource(SOURCE_1, 0).row).toBeNull();
  });
});

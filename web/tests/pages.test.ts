import { fieldLabel, fieldProblem } from "@/components/pages/InputForm";
import { type PlanVar, varField, varValues } from "@/components/pages/PlansView";
import { auditQuery, detailSummary } from "@/components/pages/AuditView";
import { ruleLabel } from "@/components/pages/SchedulesView";
import { describe, expect, it } from "vitest";
import {
  confirmDeleteMessage,
  deletedMessage,
  formatBytes,
  formatDateTime,
  setTimeZone,
  nodeTitle,
  outputView,
  planPath,
  runStatusLabel,
  sourceLabel,
} from "@/components/pages/format";

describe("sourceLabel", () => {
  it("names the document, then page, row and heading", () => {
    expect(sourceLabel({ document: "経理規程.pdf", page: 3, heading: "2.1 支払" })).toBe("経理規程.pdf p.3 「2.1 支払」");
    expect(sourceLabel({ document: "faq.csv", page: null, row: 4, heading: null })).toBe("faq.csv 行4");
    expect(sourceLabel({ document: "notice.md" })).toBe("notice.md");
  });
});

describe("runStatusLabel", () => {
  it("says every run status in Japanese", () => {
    expect(["running", "paused", "success", "failed", "cancelled"].map(runStatusLabel)).toEqual([
      "実行中",
      "入力待ち",
      "成功",
      "失敗",
      "中止",
    ]);
    expect(runStatusLabel("other")).toBe("other");
  });
});

describe("messages and formats", () => {
  it("asks and reports the deletion with the count", () => {
    expect(confirmDeleteMessage(3)).toBe("このセッションのノート 3 件を削除します。よろしいですか？");
    expect(deletedMessage("s1", 3)).toBe("セッション「s1」のノート 3 件を削除しました。");
  });

  it("shows times in Japan time and keeps what it cannot read", () => {
    expect(formatDateTime("2026-01-05T00:30:00Z")).toBe("2026/01/05 09:30");
    setTimeZone("America/New_York");
    expect(formatDateTime("2026-01-05T00:30:00Z")).toBe("2026/01/04 19:30");
    setTimeZone("Mars/Olympus_Mons"); // unknown: the last zone stays
    expect(formatDateTime("2026-01-05T00:30:00Z")).toBe("2026/01/04 19:30");
    setTimeZone("Asia/Tokyo");
    expect(formatDateTime(null)).toBe("—");
    expect(formatDateTime("昨日")).toBe("昨日");
  });

  it("sizes files and keeps the slashes of plan ids", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(2048)).toBe("2.0 KB");
    expect(planPath("経理/月次 締め")).toBe("%E7%B5%8C%E7%90%86/%E6%9C%88%E6%AC%A1%20%E7%B7%A0%E3%82%81");
  });
});

describe("outputView", () => {
  it("shows text, files, tables and the rest as JSON", () => {
    expect(outputView("a\nb", "n.a")).toEqual({ kind: "text", text: "a\nb" });
    expect(outputView(3, "n.a")).toEqual({ kind: "text", text: "3" });
    expect(outputView(null, "n.a")).toEqual({ kind: "empty" });
    expect(outputView({ name: "報告.docx", bytes: 10, base64: "AAAA" }, "n.a")).toEqual({
      kind: "file",
      name: "報告.docx",
      bytes: 10,
    });
    expect(outputView({ bytes: 4, base64: "AAAA" }, "render.document")).toEqual({
      kind: "file",
      name: "render.document",
      bytes: 4,
    });
    expect(outputView([{ a: 1, b: "x" }, { a: 2, c: null }], "n.a")).toEqual({
      kind: "table",
      columns: ["a", "b", "c"],
      rows: [
        ["1", "x", ""],
        ["2", "", ""],
      ],
    });
    expect(outputView({ total: 5 }, "n.a")).toEqual({ kind: "json", text: '{\n  "total": 5\n}' });
  });
});

describe("nodeTitle", () => {
  it("names a node by its title, inside loops too, else by its id", () => {
    const titles = { collect: "上限金額の入力", each: "ファイルごと", check: "金額の確認" };
    expect(nodeTitle(titles, "collect")).toBe("上限金額の入力");
    expect(nodeTitle(titles, "each[2]/check")).toBe("金額の確認");
    expect(nodeTitle(titles, "render")).toBe("render");
    expect(nodeTitle(undefined, "render")).toBe("render");
  });
});

describe("ruleLabel", () => {
  it("shows a business-day rule with its time, a cron expression as written", () => {
    const base = {
      schedule_id: "sch_1",
      plan_id: "monthly",
      paused: false,
      next_at: "2026-12-07T09:30+09:00",
      last_due_at: null,
      last_run_id: null,
      last_late: false,
    };
    expect(ruleLabel({ ...base, rule: "毎月第5営業日", at: "09:30" })).toBe("毎月第5営業日 09:30");
    expect(ruleLabel({ ...base, rule: "0 9 * * 1-5", at: null })).toBe("0 9 * * 1-5（cron）");
  });
});

describe("audit page helpers", () => {
  it("puts only the filled-in filters in the query", () => {
    expect(auditQuery({ actor: " sato ", kind: "", plan: "team/payments", subject: "", since: "2026-11-01", until: "" })).toBe(
      "?actor=sato&plan=team%2Fpayments&since=2026-11-01",
    );
    expect(auditQuery({ actor: "", kind: "", plan: "", subject: "", since: "", until: "" })).toBe("");
  });

  it("says what an entry's details hold in one line", () => {
    expect(
      detailSummary({ plan: "payments", comment: "金額違い", files: [{ name: "支払一覧.csv", sha256: "ab" }] }),
    ).toBe("Plan: payments・ファイル: 支払一覧.csv・コメント: 金額違い");
    expect(detailSummary({})).toBe("");
    expect(detailSummary({ plan: "expenses" }, "部署別の経費集計")).toBe("Plan: 部署別の経費集計");
  });
});

describe("input forms", () => {
  it("labels a field by its label, never by its id", () => {
    expect(fieldLabel({ id: "expenses", type: "file", label: "経費CSV" }, 0)).toBe("経費CSV");
    expect(fieldLabel({ id: "csv_file", type: "file" }, 1)).toBe("項目 2");
  });

  it("puts the step's own message, or 「入力してください」, next to a field", () => {
    const request = { fields: [], missing: ["a"], errors: { b: "数値を入力してください" } };
    expect(fieldProblem(request, { id: "a", type: "text" })).toBe("入力してください（必須）");
    expect(fieldProblem(request, { id: "b", type: "number" })).toBe("数値を入力してください");
    expect(fieldProblem(request, { id: "c", type: "text" })).toBeNull();
  });

  it("turns a Plan's vars into typed fields and back", () => {
    const vars: PlanVar[] = [
      { name: "min_amount", title: "下限金額", description: null, default: 50000, kind: "integer", secret: false },
      { name: "groups", title: "集計する列", description: null, default: ["部署"], kind: "yaml", secret: false },
      { name: "bank_account", title: "口座番号", description: null, default: "", kind: "text", secret: true },
    ];
    expect(vars.map(varField).map((field) => [field.type, field.label])).toEqual([
      ["number", "下限金額"],
      ["chat", "集計する列"],
      ["secret", "口座番号"],
    ]);
    expect(varValues(vars, { min_amount: 100000, groups: '["部署", "科目"]', bank_account: "1234567" })).toEqual({
      min_amount: 100000,
      groups: ["部署", "科目"],
      bank_account: "1234567",
    });
    expect(() => varValues(vars, { groups: "[部署" })).toThrow("「集計する列」を JSON として読めません。");
  });
});

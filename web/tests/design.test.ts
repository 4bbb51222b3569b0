import { describe, expect, it } from "vitest";
import { refusedItems } from "@/components/design/RegisterPanel";
import { ApiError } from "@/lib/api";
import {
  answerErrors,
  answerKind,
  answersToSend,
  checkItems,
  draftPlanId,
  mergeQuestions,
  newDraftId,
  registerBlocker,
  stepTitles,
  withStepTitles,
  type Generation,
  type Requirement,
  type Step,
} from "@/lib/design";

function question(id: string, type: string, extra: Partial<Requirement> = {}): Requirement {
  return {
    id,
    type,
    label: `${id} の質問`,
    description: null,
    options: [],
    required: true,
    accept: null,
    hint: null,
    validation: null,
    target: `vars.${id}`,
    ...extra,
  };
}

function step(id: string, title: string | null, extra: Partial<Step> = {}): Step {
  return { id, title, kind: "block", block: null, does: "", from: [], vars: [], conditional: false, steps: [], ...extra };
}

describe("draft ids", () => {
  it("are d- and 20 hex digits, and give the Plan id", () => {
    const id = newDraftId(() => new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 255]));
    expect(id).toBe("d-00010203040506070" + "8ff");
    expect(newDraftId()).toMatch(/^d-[0-9a-f]{20}$/);
    expect(draftPlanId(id)).toBe(`design_${id}`);
  });
});

describe("questions", () => {
  it("are typed by what the generator asks; files are asked when the Plan runs", () => {
    expect(answerKind(question("a", "select", { options: ["A", "B"] }))).toBe("choice");
    expect(answerKind(question("a", "enum", { options: ["A"] }))).toBe("choice");
    expect(answerKind(question("a", "select"))).toBe("text"); // no options to choose from
    expect(answerKind(question("a", "boolean"))).toBe("yesno");
    expect(answerKind(question("a", "number"))).toBe("number");
    expect(answerKind(question("a", "table"))).toBe("at_run");
    expect(answerKind(question("a", "file"))).toBe("at_run");
    expect(answerKind(question("a", "text"))).toBe("text");
  });

  it("keep the earlier ones, updated, and add the new ones", () => {
    const merged = mergeQuestions(
      [question("a", "text"), question("b", "text")],
      [question("b", "number"), question("c", "text")],
    );
    expect(merged.map((item) => `${item.id}:${item.type}`)).toEqual(["a:text", "b:number", "c:text"]);
  });

  it("send only answers to questions asked while designing, blanks left out", () => {
    const questions = [question("a", "text"), question("b", "number"), question("f", "file"), question("y", "boolean")];
    expect(answersToSend(questions, { a: " 金額 ", b: null, f: "x", y: false, stale: "z" })).toEqual({ a: "金額", y: false });
  });

  it("read the refused answers by question", () => {
    const refused = new ApiError("DESIGN_ANSWER_INVALID", "…", "", 400, { errors: { a: "「a の質問」は数値で入力してください" } });
    expect(answerErrors(refused)).toEqual({ a: "「a の質問」は数値で入力してください" });
    expect(answerErrors(new ApiError("OTHER", "", "", 400))).toEqual({});
  });
});

describe("steps and problems in words", () => {
  const steps = [step("read_1", "経費の読込", { block: "csv.read" }), step("x", null, { steps: [step("inner_1", "明細ごとの確認")] })];

  it("name every step by its title (a step without one by its place)", () => {
    expect(stepTitles(steps)).toEqual({ read_1: "経費の読込", x: "ステップ 2", inner_1: "明細ごとの確認" });
  });

  it("name the steps a message speaks of by their titles", () => {
    const titles = stepTitles(steps);
    expect(withStepTitles("ノード 'read_1' の出力はどこからも使われていません", titles)).toBe(
      "ステップ「経費の読込」の出力はどこからも使われていません",
    );
    expect(withStepTitles("${read_1.records} を使います", titles)).toBe("${「経費の読込」.records} を使います");
    expect(
      withStepTitles("csv.read@1.0.0 の必須の入力 'file' が指定されていません", titles, { title: "経費の読込", block: "csv.read" }),
    ).toBe("「経費の読込」の必須の入力 'file' が指定されていません");
  });

  it("list the problems of the check, errors first, with the step and the code apart", () => {
    const items = checkItems(
      {
        ok: false,
        issues: [
          { code: "UNUSED_NODE", severity: "warning", message: "ノード 'read_1' の出力はどこからも使われていません", hint: "消してください", node_id: "read_1" },
          { code: "MISSING_REQUIRED_INPUT", severity: "error", message: "必須の入力がありません", hint: null, node_id: "read_1" },
        ],
      },
      { ok: false, problems: [], warnings: [{ code: "LLM_NOT_CONFIGURED", message: "LLM が未設定です" }], nodes: [] },
      stepTitles(steps),
    );
    expect(items.map((item) => [item.severity, item.step, item.code])).toEqual([
      ["error", "経費の読込", "MISSING_REQUIRED_INPUT"],
      ["warning", "経費の読込", "UNUSED_NODE"],
      ["warning", null, "LLM_NOT_CONFIGURED"],
    ]);
    expect(items[1]?.message).toBe("ステップ「経費の読込」の出力はどこからも使われていません");
  });

  it("say why a Plan cannot be registered yet", () => {
    const result = (verdict: string) => ({ verdict }) as Generation;
    expect(registerBlocker(result("ok"), "id: x")).toBeNull();
    expect(registerBlocker(result("needs_answers"), "id: x")).toContain("答える");
    expect(registerBlocker(result("cannot_build"), "")).toContain("登録できる Plan がありません");
    expect(registerBlocker(result("ok"), " ")).toContain("Plan を作る");
    expect(registerBlocker(null, "")).toContain("Plan を作る");
  });

  it("list what a refused registration names, in the steps' words", () => {
    const error = new ApiError("DESIGN_NOT_VALID", "…", "", 400, {
      errors: [{ message: "ノード 'read_1' の入力がありません", hint: null }, { nothing: 1 }],
    });
    expect(refusedItems(error, stepTitles(steps))).toEqual([
      { message: "ステップ「経費の読込」の入力がありません", hint: null, breaking: false },
    ]);
  });
});

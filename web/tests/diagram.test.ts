import { describe, expect, it } from "vitest";
import { applyRunEvent, type Diagram, downstream, layoutDiagram, NODE_HEIGHT, stateLabel, type StepState } from "@/lib/diagram";

const DIAMOND: Diagram = {
  steps: [
    { id: "upload", title: "受け取り", kind: "input" },
    { id: "totals", title: "部署別の合計", kind: "step" },
    { id: "check", title: "件数の確認", kind: "step" },
    { id: "book", title: "Excel に書く", kind: "step" },
  ],
  edges: [
    { source: "upload", target: "totals" },
    { source: "upload", target: "check" },
    { source: "totals", target: "book" },
    { source: "check", target: "book" },
  ],
};

describe("layoutDiagram", () => {
  it("places each step below the steps it reads from, and steps of one rank side by side", () => {
    const at = Object.fromEntries(layoutDiagram(DIAMOND).map((step) => [step.id, step]));
    const placed = (id: string) => at[id] ?? { x: Number.NaN, y: Number.NaN };
    expect(placed("totals").y).toBeGreaterThanOrEqual(placed("upload").y + NODE_HEIGHT);
    expect(placed("book").y).toBeGreaterThanOrEqual(placed("totals").y + NODE_HEIGHT);
    expect(placed("totals").y).toBe(placed("check").y);
    expect(placed("totals").x).not.toBe(placed("check").x);
  });

  it("ignores an edge to a step it does not know", () => {
    const placed = layoutDiagram({ ...DIAMOND, edges: [...DIAMOND.edges, { source: "gone", target: "book" }] });
    expect(placed.map((step) => step.id)).toEqual(["upload", "totals", "check", "book"]);
  });
});

describe("applyRunEvent", () => {
  const start: Record<string, StepState> = { upload: "success", totals: "pending", check: "pending", book: "pending" };

  it("follows a step through its events", () => {
    let states = applyRunEvent(start, DIAMOND, "node_start", { node_id: "totals" });
    expect(states.totals).toBe("running");
    states = applyRunEvent(states, DIAMOND, "node_complete", { node_id: "totals" });
    expect(states.totals).toBe("success");
    states = applyRunEvent(states, DIAMOND, "node_error", { node_id: "check" });
    expect(states.check).toBe("failed");
  });

  it("leaves the diagram alone for a step inside a loop and for other events", () => {
    expect(applyRunEvent(start, DIAMOND, "node_start", { node_id: "each[0]/inner" })).toBe(start);
    expect(applyRunEvent(start, DIAMOND, "success", { status: "success" })).toBe(start);
  });

  it("puts a re-run's first step and everything after it back to これから", () => {
    const done = { upload: "success", totals: "success", check: "success", book: "success" } as const;
    const states = applyRunEvent(done, DIAMOND, "run_rerun", { from_node: "totals" });
    expect(states).toEqual({ upload: "success", totals: "pending", check: "success", book: "pending" });
    expect([...downstream(DIAMOND, "upload")].sort()).toEqual(["book", "check", "totals", "upload"]);
  });
});

describe("stateLabel", () => {
  it("calls an approval step that waits 承認待ち and an input step 入力待ち", () => {
    expect(stateLabel("waiting", "approval")).toBe("承認待ち");
    expect(stateLabel("waiting", "input")).toBe("入力待ち");
    expect(stateLabel("success", "step")).toBe("完了");
  });
});

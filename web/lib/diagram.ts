// A Plan as a diagram: the API's steps and edges laid out with dagre, and where each step
// stands during a run (from the run's saved state, then from its live events).

import dagre from "@dagrejs/dagre";

export type StepKind = "input" | "approval" | "loop" | "subflow" | "step";

/** The API's `diagram` (services/plan_diagram.py): top-level steps in words and their connections. */
export interface Diagram {
  steps: { id: string; title: string; kind: StepKind }[];
  edges: { source: string; target: string }[];
}

/** Where a step stands: the run state's node statuses, plus `running` from live events. */
export type StepState = "pending" | "running" | "waiting" | "success" | "skipped" | "failed" | "cancelled";

export const STEP_STATE_LABELS: Record<StepState, string> = {
  pending: "これから",
  running: "実行中",
  waiting: "入力待ち",
  success: "完了",
  skipped: "省略",
  failed: "失敗",
  cancelled: "中止",
};

const KIND_LABELS: Record<StepKind, string> = {
  input: "入力",
  approval: "承認",
  loop: "繰り返し",
  subflow: "サブフロー",
  step: "処理",
};

export function kindLabel(kind: StepKind): string {
  return KIND_LABELS[kind] ?? KIND_LABELS.step;
}

/** What a step's state is called; an approval step waiting is 承認待ち. */
export function stateLabel(state: StepState, kind: StepKind): string {
  if (state === "waiting" && kind === "approval") return "承認待ち";
  return STEP_STATE_LABELS[state] ?? STEP_STATE_LABELS.pending;
}

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 64;

export interface PlacedStep {
  id: string;
  x: number;
  y: number;
}

/** Top-left positions of the steps, top to bottom in the order data flows (dagre). */
export function layoutDiagram(diagram: Diagram): PlacedStep[] {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: "TB", nodesep: 32, ranksep: 48, marginx: 8, marginy: 8 });
  graph.setDefaultEdgeLabel(() => ({}));
  const known = new Set(diagram.steps.map((step) => step.id));
  for (const step of diagram.steps) graph.setNode(step.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const edge of diagram.edges) {
    if (known.has(edge.source) && known.has(edge.target)) graph.setEdge(edge.source, edge.target);
  }
  dagre.layout(graph);
  return diagram.steps.map((step) => {
    const placed = graph.node(step.id);
    return { id: step.id, x: placed.x - NODE_WIDTH / 2, y: placed.y - NODE_HEIGHT / 2 };
  });
}

/** The steps after `from` along the edges (a re-run from `from` resets them). */
export function downstream(diagram: Diagram, from: string): Set<string> {
  const found = new Set<string>([from]);
  const queue = [from];
  while (queue.length > 0) {
    const current = queue.shift() as string;
    for (const edge of diagram.edges) {
      if (edge.source === current && !found.has(edge.target)) {
        found.add(edge.target);
        queue.push(edge.target);
      }
    }
  }
  return found;
}

const EVENT_STATES: Record<string, StepState> = {
  node_start: "running",
  node_complete: "success",
  node_skipped: "skipped",
  node_error: "failed",
  node_waiting: "waiting",
};

/**
 * The states after one run event (its `kind` and `payload`, as the run's SSE stream sends
 * them): a top-level step's start, end, skip, failure or pause; a re-run puts its first step
 * and everything after it back to これから. Events about steps inside a loop or subflow
 * (`node_id` with a path) leave the diagram as it is.
 */
export function applyRunEvent(
  states: Record<string, StepState>,
  diagram: Diagram,
  kind: string,
  payload: Record<string, unknown>,
): Record<string, StepState> {
  if (kind === "run_rerun" && typeof payload.from_node === "string") {
    const next = { ...states };
    for (const id of downstream(diagram, payload.from_node)) next[id] = "pending";
    return next;
  }
  const state = EVENT_STATES[kind];
  const nodeId = payload.node_id;
  if (!state || typeof nodeId !== "string" || !diagram.steps.some((step) => step.id === nodeId)) return states;
  if (states[nodeId] === state) return states;
  return { ...states, [nodeId]: state };
}

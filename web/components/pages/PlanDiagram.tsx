"use client";

// The Plan as a diagram (React Flow, laid out by dagre): one box per step, named in words,
// an arrow wherever a step uses another's result; during a run each box shows where the step
// stands and a paused step is highlighted. Beside it, the same steps as an ordered list: what
// a screen reader or a keyboard user reads (the drawing itself is not focusable).

import { Background, Controls, Handle, type Node, type NodeProps, Position, ReactFlow } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useMemo } from "react";
import {
  type Diagram,
  kindLabel,
  layoutDiagram,
  NODE_HEIGHT,
  NODE_WIDTH,
  stateLabel,
  type StepKind,
  type StepState,
} from "@/lib/diagram";
import "./diagram.css";

interface StepData extends Record<string, unknown> {
  title: string;
  kind: StepKind;
  state: StepState | null;
}

type StepNode = Node<StepData, "step">;

function StepBox({ data }: NodeProps<StepNode>) {
  const state = data.state;
  return (
    <div
      className={`diagram-step diagram-kind-${data.kind}${state ? ` diagram-state-${state}` : ""}`}
      style={{ width: NODE_WIDTH, height: NODE_HEIGHT }}
    >
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <span className="diagram-step-title">{data.title}</span>
      <span className="diagram-step-meta">
        {kindLabel(data.kind)}
        {state ? `・${stateLabel(state, data.kind)}` : ""}
      </span>
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </div>
  );
}

const NODE_TYPES = { step: StepBox };

const ARIA_LABELS = {
  "node.a11yDescription.default": "ステップ",
  "node.a11yDescription.keyboardDisabled": "ステップ",
  "node.a11yDescription.ariaLiveMessage": () => "",
  "edge.a11yDescription.default": "つながり",
  "controls.ariaLabel": "図の表示の操作",
  "controls.zoomIn.ariaLabel": "拡大",
  "controls.zoomOut.ariaLabel": "縮小",
  "controls.fitView.ariaLabel": "全体を表示",
  "controls.interactive.ariaLabel": "操作の切り替え",
  "minimap.ariaLabel": "縮小図",
  "handle.ariaLabel": "接続点",
};

/**
 * `states`: where each step stands (a run); none for a Plan not running (設計). The paused
 * step (`waiting`) is highlighted. The steps are also listed in words below the drawing,
 * unless the page lists them itself (`withList`).
 */
export default function PlanDiagram({
  diagram,
  states,
  caption = "Plan の図",
  withList = true,
}: {
  diagram: Diagram;
  states?: Record<string, StepState>;
  caption?: string;
  /** False where the page lists the steps in words already (設計). */
  withList?: boolean;
}) {
  const placed = useMemo(() => layoutDiagram(diagram), [diagram]);
  const nodes: StepNode[] = useMemo(
    () =>
      diagram.steps.map((step, index) => ({
        id: step.id,
        type: "step",
        position: { x: placed[index]?.x ?? 0, y: placed[index]?.y ?? 0 },
        data: { title: step.title, kind: step.kind, state: states ? (states[step.id] ?? "pending") : null },
        width: NODE_WIDTH,
        height: NODE_HEIGHT,
      })),
    [diagram, placed, states],
  );
  const edges = useMemo(
    () =>
      diagram.edges.map((edge) => ({
        id: `${edge.source}->${edge.target}`,
        source: edge.source,
        target: edge.target,
        animated: states?.[edge.target] === "running",
      })),
    [diagram, states],
  );
  const height = Math.min(560, Math.max(200, ...placed.map((step) => step.y + NODE_HEIGHT + 24)));

  return (
    <figure className="diagram" data-testid="plan-diagram">
      <figcaption>{caption}</figcaption>
      <div className="diagram-canvas" style={{ height }}>
        <ReactFlow
          nodes={nodes}
          edges={edges}
          nodeTypes={NODE_TYPES}
          fitView
          fitViewOptions={{ padding: 0.1, maxZoom: 1 }}
          nodesDraggable={false}
          nodesConnectable={false}
          nodesFocusable={false}
          edgesFocusable={false}
          elementsSelectable={false}
          zoomOnScroll={false}
          preventScrolling={false}
          ariaLabelConfig={ARIA_LABELS}
          minZoom={0.2}
        >
          <Background />
          <Controls showInteractive={false} />
        </ReactFlow>
      </div>
      {withList ? (
        <ol className="diagram-steps" data-testid="plan-diagram-steps">
          {diagram.steps.map((step) => {
            const state = states ? (states[step.id] ?? "pending") : null;
            const from = diagram.edges
              .filter((edge) => edge.target === step.id)
              .map((edge) => diagram.steps.find((item) => item.id === edge.source)?.title)
              .filter((title): title is string => Boolean(title));
            return (
              <li key={step.id} className={state ? `diagram-state-${state}` : undefined} data-step-state={state ?? undefined}>
                <span className="diagram-step-title">{step.title}</span>
                <span className="diagram-step-meta">
                  {kindLabel(step.kind)}
                  {state ? `・${stateLabel(state, step.kind)}` : ""}
                  {from.length > 0 ? `・${from.map((title) => `「${title}」`).join("")}の結果を使います` : ""}
                </span>
              </li>
            );
          })}
        </ol>
      ) : null}
    </figure>
  );
}

import { questionLabel, type Outline, type Requirement, type Step } from "@/lib/design";

function StepItems({
  steps,
  titles,
  waiting,
  level,
}: {
  steps: Step[];
  titles: Record<string, string>;
  waiting: Map<string, string>;
  level: number;
}) {
  return (
    <ol className={level === 0 ? "design-steps" : "design-steps design-substeps"}>
      {steps.map((step) => {
        const title = titles[step.id] ?? "ステップ";
        const sources = step.from.map((id) => `「${titles[id] ?? "前のステップ"}」`);
        const asked = step.vars.flatMap((name) => (waiting.has(name) ? [waiting.get(name) ?? ""] : []));
        return (
          <li key={step.id} className="design-step" data-testid="design-step">
            <p className="design-step-title" data-testid="design-step-title">
              {title}
            </p>
            <p>{step.does}</p>
            <p className="muted">
              {sources.length > 0 ? `使うデータ: ${sources.join("、")}の結果` : "ほかのステップのデータは使いません"}
            </p>
            {step.conditional ? <p className="muted">条件に合うときだけ実行します。</p> : null}
            {asked.length > 0 ? (
              <p className="design-waiting" data-testid="design-step-waiting">
                <span className="design-badge design-badge-open">回答待ち</span> {asked.map((label) => `「${label}」`).join("、")}
              </p>
            ) : null}
            {step.steps.length > 0 ? <StepItems steps={step.steps} titles={titles} waiting={waiting} level={level + 1} /> : null}
          </li>
        );
      })}
    </ol>
  );
}

/** The Plan's steps in order, by title: what each does and which step it takes data from. */
export default function StepsList({
  outline,
  titles,
  questions,
  openIds,
}: {
  outline: Outline;
  titles: Record<string, string>;
  questions: Requirement[];
  openIds: Set<string>;
}) {
  const waiting = new Map<string, string>();
  questions.forEach((question, index) => {
    if (!openIds.has(question.id)) return;
    const name = question.target?.startsWith("vars.") ? question.target.slice(5) : question.id;
    waiting.set(name, questionLabel(question, index));
  });
  // An output's name is shown when it is words (an ASCII name is an identifier a person does not read).
  const outputs = outline.outputs.flatMap((item) =>
    item.title ? [item.title] : /[^\x00-\x7f]/.test(item.name) ? [item.name] : [],
  );
  return (
    <>
      <StepItems steps={outline.steps} titles={titles} waiting={waiting} level={0} />
      {outputs.length > 0 ? <p>できあがるもの: {outputs.map((name) => `「${name}」`).join("、")}</p> : null}
    </>
  );
}

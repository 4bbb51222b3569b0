"use client";

import dynamic from "next/dynamic";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import "@/components/pages/pages.css";
import "@/components/design/design.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import CheckPanel from "@/components/design/CheckPanel";
import QuestionsForm from "@/components/design/QuestionsForm";
import RegisterPanel from "@/components/design/RegisterPanel";
import StepsList from "@/components/design/StepsList";
import { formatDateTime } from "@/components/pages/format";
import { type FileAnswer, readFile } from "@/components/pages/InputForm";
import { ApiError, toApiError } from "@/lib/api";

/** React Flow is loaded with the first Plan shown, not with the page. */
const PlanDiagram = dynamic(() => import("@/components/pages/PlanDiagram"), {
  ssr: false,
  loading: () => <Spinner label="図を読み込んでいます…" />,
});
import {
  answerErrors,
  answersToSend,
  answerKind,
  checkItems,
  checkPlan,
  coverageLabel,
  draftHref,
  draftPlanId,
  generate,
  listDrafts,
  loadDraft,
  mergeQuestions,
  newDraftId,
  openQuestionIds,
  registerBlocker,
  registerPlan,
  saveDraft,
  stepBlocks,
  stepTitles,
  type Draft,
  type DraftChanges,
  type DraftSummary,
  type DryRunReport,
  type Generation,
  type ValidationReport,
} from "@/lib/design";

const SAVE_DELAY_MS = 800;
const EXAMPLE = "例: 経費.csv の金額が5万円以上の行を部門別に合計して Excel に出力";

/** What a draft keeps of a generation: the shown parts (the candidate blocks and attempts are left out). */
function kept(result: Generation): Generation {
  const { yaml: _yaml, ...rest } = result as Generation & { candidates?: unknown; attempts?: unknown };
  void _yaml;
  const copy: Record<string, unknown> = { ...rest };
  delete copy.candidates;
  delete copy.attempts;
  return copy as unknown as Generation;
}

/** The refusal of answers as a person reads it (the API's own sentence names the questions by id). */
function generationError(error: unknown): ApiError {
  const problem = toApiError(error);
  if (problem.code !== "DESIGN_ANSWER_INVALID") return problem;
  return new ApiError(
    problem.code,
    "使えない回答があります。",
    "それぞれの項目の下に書かれた説明に沿って答えを直し、もう一度「回答して Plan を作り直す」を押してください。",
    problem.status,
    problem.details,
  );
}

function RecentDrafts({ drafts, current }: { drafts: DraftSummary[]; current: string | null }) {
  if (drafts.length === 0) return null;
  return (
    <details className="design-drafts" data-testid="design-drafts">
      <summary>最近の下書き（{drafts.length} 件）</summary>
      <ul className="item-list">
        {drafts.map((item) => (
          <li key={item.draft_id}>
            <Link href={draftHref(item.draft_id)} aria-current={item.draft_id === current ? "page" : undefined}>
              {item.title || item.instruction.slice(0, 60) || "（指示なし）"}
            </Link>
            <span className="item-meta">
              {formatDateTime(item.updated_at)} 更新{item.registered ? "・登録済み" : ""}
            </span>
          </li>
        ))}
      </ul>
    </details>
  );
}

/** The 設計 page: an instruction → a Plan (its questions, steps and check) → 登録. The draft is on the server (?draft=…). */
export default function DesignView() {
  const router = useRouter();
  const draftParam = useSearchParams().get("draft");
  const [draft, setDraft] = useState<Draft | null>(null);
  const [loading, setLoading] = useState(Boolean(draftParam));
  const [loadError, setLoadError] = useState<ApiError | null>(null);
  const [drafts, setDrafts] = useState<DraftSummary[]>([]);
  const [instruction, setInstruction] = useState("");
  const [instructionProblem, setInstructionProblem] = useState<string | null>(null);
  const [values, setValues] = useState<Record<string, unknown>>({});
  const [answerProblems, setAnswerProblems] = useState<Record<string, string>>({});
  const [title, setTitle] = useState("");
  const [titleProblem, setTitleProblem] = useState<string | null>(null);
  const [acceptMajor, setAcceptMajor] = useState(false);
  const [generating, setGenerating] = useState(false);
  const [seconds, setSeconds] = useState(0);
  const [generateError, setGenerateError] = useState<ApiError | null>(null);
  const [saveError, setSaveError] = useState<ApiError | null>(null);
  const [check, setCheck] = useState<{ validation: ValidationReport; dryRun: DryRunReport | null } | null>(null);
  const [checking, setChecking] = useState(false);
  const [checkError, setCheckError] = useState<ApiError | null>(null);
  const [registering, setRegistering] = useState(false);
  const [registerError, setRegisterError] = useState<ApiError | null>(null);

  const heldId = useRef<string | null>(null);
  const pending = useRef<DraftChanges>({});
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const chain = useRef<Promise<unknown>>(Promise.resolve());
  const instructionRef = useRef<HTMLTextAreaElement>(null);
  /** The sample files chosen, read (a Plan made at once waits for the reading). */
  const samples = useRef<Promise<FileAnswer[]>>(Promise.resolve([]));
  const resultRef = useRef<HTMLHeadingElement>(null);
  const flushRef = useRef<() => void>(() => undefined);

  const show = useCallback((loaded: Draft) => {
    setDraft(loaded);
    setInstruction(loaded.instruction);
    setValues(loaded.answers);
    setTitle(loaded.title);
  }, []);

  // The draft in the address: read it (a reload, a link from 最近の下書き); none: a new, empty page.
  useEffect(() => {
    if (draftParam === heldId.current) return; // the page itself just put it there
    flushRef.current();
    heldId.current = draftParam;
    setCheck(null);
    setGenerateError(null);
    setRegisterError(null);
    setAnswerProblems({});
    if (!draftParam) {
      setDraft(null);
      setInstruction("");
      setValues({});
      setTitle("");
      setLoading(false);
      setLoadError(null);
      return;
    }
    let stopped = false;
    setLoading(true);
    setLoadError(null);
    loadDraft(draftParam)
      .then((loaded) => {
        if (!stopped) show(loaded);
      })
      .catch((cause: unknown) => {
        if (!stopped) {
          setDraft(null);
          setLoadError(toApiError(cause));
        }
      })
      .finally(() => {
        if (!stopped) setLoading(false);
      });
    return () => {
      stopped = true;
    };
  }, [draftParam, show]);

  useEffect(() => {
    listDrafts()
      .then(setDrafts)
      .catch(() => setDrafts([])); // the list is a convenience: the page works without it
  }, [draft?.draft_id, draft?.registered]);

  useEffect(() => {
    if (!generating) return;
    setSeconds(0);
    const started = Date.now();
    const tick = setInterval(() => setSeconds(Math.floor((Date.now() - started) / 1000)), 1000);
    return () => clearInterval(tick);
  }, [generating]);

  /** The draft's id, a new one (put in the address) when the page has none yet. */
  const ensureId = useCallback((): string => {
    if (heldId.current) return heldId.current;
    const id = newDraftId();
    heldId.current = id;
    router.replace(draftHref(id), { scroll: false });
    return id;
  }, [router]);

  /** Save now, to the draft `id`, what is waiting and `changes` (saves go one after another, in order). */
  const persist = useCallback((id: string, changes: DraftChanges = {}): Promise<Draft> => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    const merged = { ...pending.current, ...changes };
    pending.current = {};
    const saved = chain.current.then(() => saveDraft(id, merged));
    chain.current = saved.catch(() => {
      // not saved: kept for the next save (newer changes win), so nothing typed or generated is lost
      pending.current = { ...merged, ...pending.current };
    });
    return saved.then((result) => {
      if (heldId.current === id) {
        setDraft(result);
        setSaveError(null);
      }
      return result;
    });
  }, []);

  /** Save `changes` a moment after the typing stops (to the draft shown now: a new one when there is none). */
  const saveSoon = useCallback(
    (changes: DraftChanges) => {
      const id = ensureId();
      pending.current = { ...pending.current, ...changes };
      if (timer.current) clearTimeout(timer.current);
      timer.current = setTimeout(() => {
        persist(id).catch((cause: unknown) => setSaveError(toApiError(cause)));
      }, SAVE_DELAY_MS);
    },
    [ensureId, persist],
  );

  /** Before another draft is shown: save what is still waiting to the draft it was typed in. */
  const flush = useCallback(() => {
    const id = heldId.current;
    if (timer.current && id) void persist(id).catch(() => undefined);
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    pending.current = {};
  }, [persist]);

  useEffect(() => {
    flushRef.current = flush;
  }, [flush]);

  useEffect(() => () => flushRef.current(), []);

  const questions = useMemo(() => draft?.questions ?? [], [draft]);
  const result = draft?.result ?? null;
  const yaml = draft?.yaml ?? "";
  const openIds = useMemo(() => openQuestionIds(result), [result]);
  const titles = useMemo(() => stepTitles(draft?.outline?.steps ?? []), [draft]);
  const blocks = useMemo(() => stepBlocks(draft?.outline?.steps ?? []), [draft]);
  const issues = useMemo(
    () =>
      check
        ? checkItems(check.validation, check.dryRun, titles, blocks)
        : checkItems(result?.validation ?? null, result?.dry_run ?? null, titles, blocks),
    [check, result, titles, blocks],
  );

  const runGeneration = async (text: string, answers: Record<string, unknown>, earlier: typeof questions) => {
    setGenerating(true);
    setGenerateError(null);
    setAnswerProblems({});
    setRegisterError(null);
    setCheck(null);
    setCheckError(null);
    try {
      const id = ensureId();
      await persist(id, { instruction, answers });
      const generated = await generate(text, draftPlanId(id), answers, await samples.current);
      const made = {
        generated_instruction: text,
        questions: mergeQuestions(earlier, generated.requirements),
        answers,
        yaml: generated.yaml ?? "",
        result: kept(generated),
      };
      try {
        await persist(id, { ...made, clear_registered: true });
      } catch (cause) {
        // the Plan was made but not saved: show it, and save it again with the next change
        if (heldId.current === id) {
          setDraft((shown) => (shown ? { ...shown, ...made, registered: null } : shown));
          setSaveError(toApiError(cause));
          saveSoon({ clear_registered: true });
        }
        return;
      }
      if (heldId.current === id) resultRef.current?.focus();
    } catch (cause) {
      setAnswerProblems(answerErrors(cause));
      setGenerateError(generationError(cause));
    } finally {
      setGenerating(false);
    }
  };

  const onGenerate = () => {
    const text = instruction.trim();
    if (!text) {
      setInstructionProblem("指示を入力してください。やりたいことを、使うファイルと出力の形も含めて書きます。");
      instructionRef.current?.focus();
      return;
    }
    setInstructionProblem(null);
    const same = draft !== null && draft.generated_instruction === text;
    const earlier = same ? questions : [];
    const answers = same ? answersToSend(earlier, values) : {};
    if (!same) setValues({});
    void runGeneration(text, answers, earlier);
  };

  const onAnswer = () => {
    if (!draft) return;
    const answers = answersToSend(questions, values);
    const missing = questions.filter(
      (question) => answerKind(question) !== "at_run" && question.required && !(question.id in answers),
    );
    if (missing.length === questions.filter((question) => answerKind(question) !== "at_run").length) {
      setAnswerProblems(Object.fromEntries(missing.map((question) => [question.id, "答えを入力してください。"])));
      return;
    }
    void runGeneration(draft.generated_instruction, answers, questions);
  };

  const onCheck = async () => {
    if (!yaml.trim()) return;
    setChecking(true);
    setCheckError(null);
    try {
      setCheck(await checkPlan(yaml));
    } catch (cause) {
      setCheckError(toApiError(cause));
    } finally {
      setChecking(false);
    }
  };

  const onRegister = async () => {
    const name = title.trim();
    if (!name) {
      setTitleProblem("Plan の名前を入力してください。一覧に表示される名前です（例: 部署別の経費集計）。");
      document.getElementById("design-title")?.focus();
      return;
    }
    setTitleProblem(null);
    setRegistering(true);
    setRegisterError(null);
    try {
      const id = ensureId();
      const named = await persist(id, { title: name });
      const registered = await registerPlan(named.yaml, acceptMajor);
      await persist(id, { registered: { ...registered, title: name } });
      setAcceptMajor(false);
    } catch (cause) {
      setRegisterError(toApiError(cause));
    } finally {
      setRegistering(false);
    }
  };

  const startNew = () => router.push("/design/");

  return (
    <>
      <h1>設計</h1>
      <p className="muted">
        やりたい手順を文章で書くと、実行できる Plan（業務の手順書）を組み立てます。質問に答えて仕上げ、登録すると Plan
        のページから実行できます。書いた内容は下書きとして自動で保存されます。
      </p>
      <div className="actions design-draft-bar">
        <button type="button" onClick={startNew} data-testid="design-new">
          新しい下書き
        </button>
        <RecentDrafts drafts={drafts} current={draft?.draft_id ?? null} />
      </div>

      {loading ? <Spinner label="下書きを読み込んでいます…" /> : null}
      <ErrorBox error={loadError} testId="design-load-error" />

      {loading || loadError ? null : (
        <>
          <section className="panel" aria-labelledby="design-instruction-title">
            <h2 id="design-instruction-title">指示</h2>
            <form
              onSubmit={(event) => {
                event.preventDefault();
                onGenerate();
              }}
            >
              <div className="input-field">
                <label htmlFor="design-instruction">やりたいこと（文章で）</label>
                <textarea
                  id="design-instruction"
                  ref={instructionRef}
                  rows={4}
                  maxLength={4000}
                  value={instruction}
                  placeholder={EXAMPLE}
                  aria-invalid={instructionProblem ? true : undefined}
                  aria-describedby={instructionProblem ? "design-instruction-problem" : "design-instruction-note"}
                  onChange={(event) => {
                    setInstruction(event.target.value);
                    if (event.target.value.trim() || heldId.current) saveSoon({ instruction: event.target.value });
                  }}
                  data-testid="design-instruction"
                />
                <p className="muted" id="design-instruction-note">
                  使うファイル（例: 経費.csv）、何をするか（絞り込み・集計・照合など）、出力の形（Excel・CSV）を書くと正確になります。
                </p>
                {instructionProblem ? (
                  <p className="error-message" id="design-instruction-problem" role="alert">
                    {instructionProblem}
                  </p>
                ) : null}
              </div>
              <div className="input-field">
                <label htmlFor="design-samples">見本のファイル（任意）</label>
                <input
                  id="design-samples"
                  type="file"
                  multiple
                  accept=".csv,.tsv,.txt,.xlsx,.xlsm"
                  aria-describedby="design-samples-note"
                  onChange={(event) => {
                    const files = Array.from(event.target.files ?? []).slice(0, 5);
                    samples.current = Promise.all(files.map(readFile));
                  }}
                  data-testid="design-samples"
                />
                <p className="muted" id="design-samples-note">
                  Plan で使うのと同じ形の CSV・Excel を選ぶと、列についての質問がその列からの選択になります（最大 5 件。ファイルは下書きに保存しません）。
                </p>
              </div>
              <div className="actions">
                <button type="submit" className="primary" disabled={generating} data-testid="design-generate">
                  Plan を作る
                </button>
                {generating ? (
                  <>
                    <Spinner label="Plan を作っています…" />
                    <span className="muted" aria-hidden="true">
                      {seconds} 秒
                    </span>
                  </>
                ) : null}
              </div>
            </form>
            {draft && draft.generated_instruction && draft.generated_instruction !== instruction.trim() ? (
              <p className="notice" data-testid="design-instruction-changed">
                指示が、いまの Plan を作ったときから変わっています。「Plan を作る」で作り直すと反映されます。
              </p>
            ) : null}
            <ErrorBox error={generateError} testId="design-generate-error" />
            <ErrorBox error={saveError} testId="design-save-error" />
          </section>

          {result ? (
            <section className="panel" aria-labelledby="design-result-title" data-testid="design-result">
              <h2 id="design-result-title" ref={resultRef} tabIndex={-1}>
                作った Plan
              </h2>
              <p className={`design-verdict design-verdict-${result.verdict}`} data-testid="design-verdict">
                {result.verdict_message}
              </p>
              {(result.gaps ?? []).length > 0 ? (
                <>
                  <h3>作れない部分</h3>
                  <ul className="design-gaps" data-testid="design-gaps">
                    {(result.gaps ?? []).map((gap, index) => (
                      <li key={index}>{gap.message}</li>
                    ))}
                  </ul>
                </>
              ) : null}
              {result.coverage ? (
                <>
                  <h3>指示の項目</h3>
                  <ul className="design-coverage">
                    {(result.coverage.items ?? []).map((item) => (
                      <li key={item.requirement}>
                        <span className={`design-badge design-badge-${item.status}`}>{coverageLabel(item.status)}</span>{" "}
                        {item.text}
                        {item.problem ? <span className="muted">（{item.problem}）</span> : null}
                      </li>
                    ))}
                  </ul>
                </>
              ) : (result.checklist ?? []).length > 0 ? (
                <>
                  <h3>指示の項目</h3>
                  <ul className="design-coverage">
                    {(result.checklist ?? []).map((line) => (
                      <li key={line}>{line}</li>
                    ))}
                  </ul>
                </>
              ) : null}
              {(result.warnings ?? []).map((warning) => (
                <p key={warning} className="muted">
                  {warning}
                </p>
              ))}
            </section>
          ) : null}

          {result && questions.length > 0 ? (
            <QuestionsForm
              questions={questions}
              values={values}
              openIds={openIds}
              problems={answerProblems}
              busy={generating}
              onChange={(id, value) => {
                const next = { ...values, [id]: value };
                setValues(next);
                setAnswerProblems((current) => {
                  const rest = { ...current };
                  delete rest[id];
                  return rest;
                });
                saveSoon({ answers: next });
              }}
              onSubmit={onAnswer}
            />
          ) : null}

          {draft?.outline ? (
            <section className="panel" aria-labelledby="design-steps-title" data-testid="design-steps">
              <h2 id="design-steps-title">Plan の手順</h2>
              <StepsList outline={draft.outline} titles={titles} questions={questions} openIds={openIds} />
              {result?.diagram && result.diagram.steps.length > 0 ? (
                <PlanDiagram diagram={result.diagram} caption="Plan の図" withList={false} />
              ) : null}
            </section>
          ) : null}

          {yaml.trim() ? (
            <>
              <CheckPanel
                items={issues}
                checkedAt={check ? "check" : "generation"}
                dryRunDone={check ? check.dryRun !== null : Boolean(result?.dry_run)}
                busy={checking}
                error={checkError}
                onCheck={() => void onCheck()}
              />
              <details className="panel design-yaml" data-testid="design-yaml">
                <summary>YAML を見る</summary>
                <label htmlFor="design-yaml-text" className="muted">
                  Plan の YAML（読み取り専用）
                </label>
                <textarea id="design-yaml-text" readOnly rows={18} value={yaml} spellCheck={false} />
              </details>
            </>
          ) : null}

          {result ? (
            <RegisterPanel
              blocker={registerBlocker(result, yaml)}
              title={title}
              titleProblem={titleProblem}
              acceptMajor={acceptMajor}
              busy={registering}
              error={registerError}
              registered={draft?.registered ?? null}
              titles={titles}
              onTitle={(value) => {
                setTitle(value);
                setTitleProblem(null);
                saveSoon({ title: value });
              }}
              onAcceptMajor={setAcceptMajor}
              onRegister={() => void onRegister()}
            />
          ) : null}
        </>
      )}
    </>
  );
}

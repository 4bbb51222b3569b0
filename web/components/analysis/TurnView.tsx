"use client";

import { useEffect, useState } from "react";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import DownloadLink from "@/components/pages/DownloadLink";
import Markdown from "@/components/research/Markdown";
import type { ApiError } from "@/lib/api";
import {
  type Artifact,
  askedQuestion,
  CONCLUSION_SECTIONS,
  type FigureArtifact,
  figureObjectUrl,
  numericColumn,
  reportFileName,
  reportSections,
  suggestions,
  type TableArtifact,
  TECHNICAL_SECTIONS,
  type TurnResult,
} from "@/lib/analysis";

/** One turn as the page holds it: the question, and the run's progress, result or error. */
export interface TurnItem {
  key: string;
  question: string;
  status: "running" | "success" | "failed";
  runId: string | null;
  progress: string[];
  result: TurnResult | null;
  error: ApiError | null;
}

function TableView({ artifact }: { artifact: TableArtifact }) {
  const display = artifact.display;
  const captionId = `analysis-table-${artifact.artifact_id}`;
  if (!display) return <p className="muted">表「{artifact.title}」は表示できません。</p>;
  const total = artifact.total_rows ?? display.rows.length;
  const numeric = display.columns.map((_column, index) => numericColumn(display.rows, index));
  return (
    <div className="analysis-artifact" data-testid="analysis-table">
      <div className="table-wrap analysis-table" tabIndex={0} role="region" aria-labelledby={captionId}>
        <table>
          <caption id={captionId}>{artifact.title}</caption>
          <thead>
            <tr>
              {display.columns.map((column, index) => (
                <th key={index} scope="col" className={numeric[index] ? "analysis-number" : undefined}>
                  {column}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {display.rows.map((row, rowIndex) => (
              <tr key={rowIndex}>
                {row.map((cell, index) => (
                  <td key={index} className={numeric[index] ? "analysis-number" : undefined}>
                    {cell}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {artifact.description ? <p className="muted">{artifact.description}</p> : null}
      {total > display.rows.length ? (
        <p className="muted">
          全 {total.toLocaleString("ja-JP")} 行中 {display.rows.length.toLocaleString("ja-JP")} 行を表示しています。
        </p>
      ) : null}
    </div>
  );
}

const FIGURE_GONE =
  "図「{title}」は、保存された記録から読み込めないため表示できません（保存期間を過ぎて削除されたか、壊れています）。";

/** A figure's PNG, fetched with the token (an <img> alone could not send it). */
function FigureView({ artifact }: { artifact: FigureArtifact }) {
  const [src, setSrc] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    let url: string | null = null;
    setSrc(null);
    setFailed(false);
    figureObjectUrl(artifact.url, controller.signal)
      .then((objectUrl) => {
        url = objectUrl;
        if (controller.signal.aborted) URL.revokeObjectURL(objectUrl);
        else setSrc(objectUrl);
      })
      .catch(() => {
        if (!controller.signal.aborted) setFailed(true);
      });
    return () => {
      controller.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [artifact.url]);

  const alt = `図「${artifact.title}」${artifact.description ? `：${artifact.description}` : ""}`;
  return (
    <figure className="analysis-artifact analysis-figure" data-testid="analysis-figure">
      {src ? (
        // eslint-disable-next-line @next/next/no-img-element -- a blob URL of the API's PNG
        <img src={src} alt={alt} />
      ) : failed ? (
        <p className="notice" role="note">
          {FIGURE_GONE.replace("{title}", artifact.title)} 同じ質問をもう一度入力すると、作り直せます。
        </p>
      ) : (
        <Spinner label={`図「${artifact.title}」を読み込んでいます…`} />
      )}
      <figcaption>{artifact.title}</figcaption>
    </figure>
  );
}

function ArtifactView({ artifact }: { artifact: Artifact }) {
  switch (artifact.kind) {
    case "table":
      return <TableView artifact={artifact} />;
    case "figure":
      return <FigureView artifact={artifact} />;
    case "text":
      return (
        <div className="analysis-artifact analysis-point" data-testid="analysis-point">
          <h4>{artifact.title}</h4>
          <p>{artifact.text ?? ""}</p>
        </div>
      );
    default:
      return null;
  }
}

/** Answers offered as buttons (a click sends one as the next turn of the same conversation). */
function Choices({
  choices,
  label,
  labelId,
  busy,
  onChoose,
  testId,
}: {
  choices: string[];
  label: string;
  labelId: string;
  busy: boolean;
  onChoose: (answer: string) => void;
  testId: string;
}) {
  if (choices.length === 0) return null;
  return (
    <div className="analysis-choices" role="group" aria-labelledby={labelId} data-testid={testId}>
      <p id={labelId} className="analysis-choices-label">
        {label}
      </p>
      <div className="analysis-choice-list">
        {choices.map((choice) => (
          <button key={choice} type="button" onClick={() => onChoose(choice)} disabled={busy}>
            {choice}
          </button>
        ))}
      </div>
    </div>
  );
}

function Report({
  result,
  datasetName,
  index,
  latest,
  busy,
  onChoose,
}: {
  result: TurnResult;
  datasetName: string | null;
  index: number;
  latest: boolean;
  busy: boolean;
  onChoose: (answer: string) => void;
}) {
  const sections = reportSections(result.report_md ?? "");
  const conclusion = sections.find((section) => section.heading && CONCLUSION_SECTIONS.has(section.heading));
  return (
    <>
      {conclusion ? (
        <div className="analysis-conclusion" data-testid="analysis-conclusion">
          <h4>結論</h4>
          <Markdown text={conclusion.body} />
        </div>
      ) : null}
      {result.artifacts.map((artifact) => (
        <ArtifactView key={artifact.artifact_id} artifact={artifact} />
      ))}
      <details className="analysis-report" data-testid="analysis-report">
        <summary>レポート全文を読む</summary>
        {sections.map((section, index) =>
          section.heading && TECHNICAL_SECTIONS.has(section.heading) ? (
            <details key={index} className="analysis-technical">
              <summary>{section.heading}（同じ分析をコマンドでやり直すための記録）</summary>
              <Markdown text={section.body} />
            </details>
          ) : (
            <section key={index}>
              {section.heading ? <h4>{section.heading}</h4> : null}
              <Markdown text={section.body} />
            </section>
          ),
        )}
      </details>
      {result.report_url ? (
        <div className="actions analysis-downloads" data-testid="analysis-downloads">
          <DownloadLink
            path={result.report_url}
            name={reportFileName(datasetName, false)}
            label="レポート（Markdown）をダウンロード"
          />
          {result.report_zip_url ? (
            <DownloadLink
              path={result.report_zip_url}
              name={reportFileName(datasetName, true)}
              label="レポートと図（ZIP）をダウンロード"
            />
          ) : null}
        </div>
      ) : null}
      {latest ? (
        <Choices
          choices={suggestions(sections)}
          label="続けて聞けること"
          labelId={`analysis-suggestions-${index}`}
          busy={busy}
          onChoose={onChoose}
          testId="analysis-suggestions"
        />
      ) : null}
    </>
  );
}

function Answer({
  result,
  index,
  latest,
  busy,
  datasetName,
  onChoose,
}: {
  result: TurnResult;
  index: number;
  latest: boolean;
  busy: boolean;
  datasetName: string | null;
  onChoose: (answer: string) => void;
}) {
  const hasReport = result.report_md !== null && result.report_md !== undefined;
  return (
    <>
      {result.notice && hasReport ? (
        <p className="notice" role="note">
          {result.notice}
        </p>
      ) : null}
      {hasReport ? (
        <Report
          result={result}
          datasetName={datasetName}
          index={index}
          latest={latest}
          busy={busy}
          onChoose={onChoose}
        />
      ) : (
        <>
          {result.artifacts.map((artifact) => (
            <ArtifactView key={artifact.artifact_id} artifact={artifact} />
          ))}
          <Markdown text={result.reply} className="analysis-reply" testId="analysis-reply" />
          {latest
            ? result.questions.map((question, questionIndex) => (
                <Choices
                  key={questionIndex}
                  choices={askedQuestion(question).choices}
                  label="答えを選んでください（質問欄に書いて答えることもできます）"
                  labelId={`analysis-choices-${index}-${questionIndex}`}
                  busy={busy}
                  onChoose={onChoose}
                  testId="analysis-choices"
                />
              ))
            : null}
        </>
      )}
      {result.actions && result.actions.length > 0 ? (
        <details className="analysis-technical">
          <summary>技術的な詳細（実行した処理の記録）</summary>
          <pre className="analysis-json">{JSON.stringify(result.actions, null, 2)}</pre>
        </details>
      ) : null}
    </>
  );
}

/** One turn: the question, then the progress while it runs, and the answer or the error. */
export default function TurnView({
  item,
  index,
  latest,
  answering = false,
  busy,
  datasetName,
  onChoose,
}: {
  item: TurnItem;
  index: number;
  latest: boolean;
  /** The turn answers the agent's question in the turn before it. */
  answering?: boolean;
  busy: boolean;
  datasetName: string | null;
  onChoose: (answer: string) => void;
}) {
  const headingId = `analysis-turn-${index}`;
  return (
    <article className="analysis-turn" aria-labelledby={headingId} data-testid="analysis-turn">
      <h3 id={headingId} className="analysis-question">
        <span className="analysis-who">
          質問 {index + 1}
          {answering ? "（エージェントの問いへの答え）" : ""}
        </span>
        <span className="analysis-question-text">{item.question}</span>
      </h3>
      <div className="analysis-answer" data-testid="analysis-answer">
        {item.status === "running" ? (
          <div data-testid="analysis-progress">
            <Spinner label="分析しています…" />
            {item.progress.length > 0 ? (
              <ol className="analysis-progress" aria-label="進み具合">
                {item.progress.map((line, lineIndex) => (
                  <li key={lineIndex}>{line}</li>
                ))}
              </ol>
            ) : null}
          </div>
        ) : null}
        {item.status !== "running" && item.progress.length > 0 ? (
          <details className="analysis-technical" data-testid="analysis-steps">
            <summary>分析の経過（{item.progress.length} 件）</summary>
            <ol className="analysis-progress">
              {item.progress.map((line, lineIndex) => (
                <li key={lineIndex}>{line}</li>
              ))}
            </ol>
          </details>
        ) : null}
        {item.error ? <ErrorBox error={item.error} testId="analysis-turn-error" /> : null}
        {item.result ? (
          <Answer
            result={item.result}
            index={index}
            latest={latest}
            busy={busy}
            datasetName={datasetName}
            onChoose={onChoose}
          />
        ) : null}
      </div>
    </article>
  );
}

"use client";

import type { RefObject } from "react";
import { columnKindLabel, type DatasetSummary, noteText, sizeText } from "@/lib/analysis";

/** What was loaded: the file's name, 行数 × 列数, what loading did (notes), and its columns. */
export default function DatasetSummaryPanel({
  summary,
  headingRef,
}: {
  summary: DatasetSummary;
  headingRef?: RefObject<HTMLHeadingElement | null>;
}) {
  const notes = summary.notes ?? [];
  return (
    <section className="panel analysis-summary" aria-labelledby="analysis-data-title" data-testid="analysis-summary">
      <h2 id="analysis-data-title" ref={headingRef} tabIndex={-1}>
        読み込んだデータ
      </h2>
      <p className="analysis-data-line">
        <strong data-testid="analysis-file-name">{summary.name}</strong>
        <span className="analysis-size" data-testid="analysis-size">
          {sizeText(summary)}
        </span>
      </p>
      {notes.length > 0 ? (
        <ul className="analysis-notes" aria-label="読み込みで行ったこと" data-testid="analysis-notes">
          {notes.map((note, index) => (
            <li key={index} className="notice">
              {noteText(note)}
            </li>
          ))}
        </ul>
      ) : null}
      <div className="table-wrap analysis-table" tabIndex={0} role="region" aria-labelledby="analysis-columns-caption">
        <table data-testid="analysis-columns">
          <caption id="analysis-columns-caption">列の一覧（{summary.columns.length} 列）</caption>
          <thead>
            <tr>
              <th scope="col">列</th>
              <th scope="col">種類</th>
              <th scope="col">空欄</th>
              <th scope="col">値の例</th>
            </tr>
          </thead>
          <tbody>
            {summary.columns.map((column, index) => (
              <tr key={`${column.name}-${index}`}>
                <th scope="row">{column.name}</th>
                <td className="analysis-nowrap">{columnKindLabel(column.kind)}</td>
                <td className="analysis-nowrap">{column.missing.toLocaleString("ja-JP")} 件</td>
                <td>
                  {(column.examples ?? []).join("、") || "—"}
                  {(column.notes ?? []).map((note, noteIndex) => (
                    <span key={noteIndex} className="analysis-column-note">
                      {noteText(note)}
                    </span>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

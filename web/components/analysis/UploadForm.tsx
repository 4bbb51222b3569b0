"use client";

import { useRef, useState } from "react";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import { ApiError, toApiError } from "@/lib/api";
import { type Dataset, FILE_ACCEPT, FILE_TYPES_TEXT, uploadDataset } from "@/lib/analysis";

const NO_FILE = new ApiError(
  "FILE_MISSING",
  "ファイルが選ばれていません。",
  "「ファイルを選択」から CSV / TSV / Excel ファイルを選んでから「読み込む」を押してください。",
  0,
);

const EXCEL = /\.(xlsx|xlsm)$/i;

/** The file field, the sheet (Excel), 「合計行を残す」 and 読み込む; an error is said next to the field. */
export default function UploadForm({ onUploaded }: { onUploaded: (dataset: Dataset) => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [keepTotals, setKeepTotals] = useState(false);
  const [sheet, setSheet] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const input = useRef<HTMLInputElement>(null);

  const submit = async (event: React.FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (busy) return;
    if (!file) {
      setError(NO_FILE);
      input.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const dataset = await uploadDataset(file, keepTotals, EXCEL.test(file.name) ? sheet : "");
      onUploaded(dataset);
    } catch (cause) {
      setError(toApiError(cause));
      input.current?.focus();
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="panel analysis-upload" onSubmit={(event) => void submit(event)} noValidate aria-labelledby="analysis-upload-title">
      <h2 id="analysis-upload-title">ファイルの読み込み</h2>
      <div className="analysis-field">
        <label htmlFor="analysis-file">分析するファイル</label>
        <p id="analysis-file-help" className="muted">
          読み込める形式: {FILE_TYPES_TEXT}。文字コードは自動で判別します。
        </p>
        <input
          ref={input}
          id="analysis-file"
          type="file"
          accept={FILE_ACCEPT}
          aria-describedby="analysis-file-help analysis-file-error"
          aria-invalid={error ? true : undefined}
          data-testid="analysis-file"
          onChange={(event) => {
            setFile(event.target.files?.[0] ?? null);
            setError(null);
          }}
        />
        <div id="analysis-file-error">
          <ErrorBox error={error} testId="analysis-upload-error" />
        </div>
      </div>
      {file && EXCEL.test(file.name) ? (
        <div className="analysis-field">
          <label htmlFor="analysis-sheet">シート名（空欄なら最初のシート）</label>
          <input
            id="analysis-sheet"
            type="text"
            className="analysis-narrow"
            value={sheet}
            onChange={(event) => setSheet(event.target.value)}
            autoComplete="off"
          />
        </div>
      ) : null}
      <div className="analysis-check">
        <input
          id="analysis-keep-totals"
          type="checkbox"
          checked={keepTotals}
          onChange={(event) => setKeepTotals(event.target.checked)}
          aria-describedby="analysis-keep-totals-help"
        />
        <label htmlFor="analysis-keep-totals">合計行を残す</label>
      </div>
      <p id="analysis-keep-totals-help" className="muted">
        合計・小計の行は二重に数えないよう除外します。データとして残すときに選びます。
      </p>
      <div className="actions">
        <button type="submit" className="primary" disabled={busy} data-testid="analysis-upload">
          読み込む
        </button>
        {busy ? <Spinner label="ファイルを読み込んでいます…" /> : null}
      </div>
    </form>
  );
}

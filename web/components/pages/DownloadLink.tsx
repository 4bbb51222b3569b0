"use client";

import { useState } from "react";
import ErrorBox from "@/components/ErrorBox";
import { apiFetch, apiUrl, toApiError, type ApiError } from "@/lib/api";

/**
 * A file from the API as a download. The link's address is the API's; a click fetches it with the
 * token (a plain link could not send it) and saves it under `name`.
 */
export default function DownloadLink({ path, name, label }: { path: string; name: string; label: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const download = async (event: React.MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      const response = await apiFetch(path);
      const url = URL.createObjectURL(await response.blob());
      const anchor = document.createElement("a");
      anchor.href = url;
      anchor.download = name;
      document.body.appendChild(anchor);
      anchor.click();
      anchor.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (cause) {
      setError(toApiError(cause));
    } finally {
      setBusy(false);
    }
  };

  return (
    <span className="download">
      <a href={apiUrl(path)} download={name} onClick={download} aria-busy={busy}>
        {busy ? "ダウンロードしています…" : label}
      </a>
      <ErrorBox error={error} testId="download-error" />
    </span>
  );
}

"use client";

import { useEffect, useState } from "react";
import { loadHealth, offlineNotice } from "@/lib/health";

/** On every page, from the start: the server runs without a language model (GET /api/health). */
export default function OfflineNotice() {
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    loadHealth()
      .then((health) => {
        if (!cancelled) setNotice(offlineNotice(health));
      })
      .catch(() => {
        // The pages show a network failure themselves when they call the API.
      });
    return () => {
      cancelled = true;
    };
  }, []);

  if (!notice) return null;
  return (
    <p className="notice offline-notice" role="note" data-testid="offline-notice">
      {notice}
    </p>
  );
}

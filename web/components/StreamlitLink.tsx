"use client";

import { useEffect, useState } from "react";
import { loadHealth } from "@/lib/health";

/** The menu's link to the Streamlit app, where the server says it is (KEIRI_AGENT_STREAMLIT_URL); none otherwise. */
export default function StreamlitLink() {
  const [url, setUrl] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    loadHealth()
      .then((health) => {
        if (!cancelled && typeof health.streamlit_url === "string" && /^https?:\/\//.test(health.streamlit_url)) {
          setUrl(health.streamlit_url);
        }
      })
      .catch(() => {
        // no link when the server cannot be asked
      });
    return () => {
      cancelled = true;
    };
  }, []);

  if (!url) return null;
  return (
    <li>
      <a href={url} target="_blank" rel="noopener noreferrer" data-testid="streamlit-link">
        データ分析・設計（Streamlit）
      </a>
    </li>
  );
}

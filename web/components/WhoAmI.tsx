"use client";

import { useEffect, useState } from "react";
import { loadHealth } from "@/lib/health";
import { loadMe, roleNames, signOut, type Me } from "@/lib/people";

/** Who is signed in (name and roles) and サインアウト, in the header; nothing on one person's server. */
export default function WhoAmI() {
  const [me, setMe] = useState<Me | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let cancelled = false;
    loadHealth()
      .then(async (health) => {
        if (!health.token_required) return;
        const found = await loadMe();
        if (!cancelled) setMe(found);
      })
      .catch(() => {
        // Not signed in yet: the sign-in dialog asks.
      });
    return () => {
      cancelled = true;
    };
  }, []);

  if (!me) return null;
  const leave = async () => {
    setBusy(true);
    try {
      await signOut();
    } finally {
      window.location.assign("/");
    }
  };
  return (
    <div className="who-am-i" data-testid="who-am-i">
      <span>
        {me.display_name}（{roleNames(me.roles) || "役割なし"}）
      </span>
      <button type="button" onClick={() => void leave()} disabled={busy} data-testid="sign-out">
        サインアウト
      </button>
    </div>
  );
}

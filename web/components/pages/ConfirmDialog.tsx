"use client";

import { useEffect, useRef } from "react";

/**
 * A modal confirmation (<dialog>): focus starts on キャンセル, Esc cancels, Tab stays inside, the
 * confirming button carries data-testid="confirm-delete".
 */
export default function ConfirmDialog({
  open,
  title,
  message,
  confirmLabel,
  busy,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  message: string;
  confirmLabel: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const openerRef = useRef<HTMLElement | null>(null);

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      openerRef.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
      cancelRef.current?.focus();
    } else if (!open && dialog.open) {
      dialog.close();
      const opener = openerRef.current;
      if (opener?.isConnected) opener.focus(); // back where the user was
    }
  }, [open]);

  return (
    <dialog
      ref={dialogRef}
      className="confirm-dialog"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-message"
      onKeyDown={(event) => {
        // Esc is handled here: the browser may close a <dialog> without a cancel event.
        if (event.key !== "Escape") return;
        event.preventDefault();
        if (!busy) onCancel();
      }}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) onCancel();
      }}
      onClose={() => {
        if (open) onCancel(); // closed by the browser: keep the page's state in step
      }}
    >
      <h2 id="confirm-title">{title}</h2>
      <p id="confirm-message">{message}</p>
      <div className="actions">
        <button type="button" ref={cancelRef} onClick={onCancel} disabled={busy}>
          キャンセル
        </button>
        <button type="button" className="danger" onClick={onConfirm} disabled={busy} data-testid="confirm-delete">
          {busy ? "削除しています…" : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

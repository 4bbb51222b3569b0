/** A progress indicator for a long wait; screen readers hear the label. */
export default function Spinner({ label }: { label: string }) {
  return (
    <span className="spinner" role="status" aria-live="polite">
      <span className="spinner-wheel" aria-hidden="true" />
      <span className="spinner-label">{label}</span>
    </span>
  );
}

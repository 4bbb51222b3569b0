import type { ApiError } from "@/lib/api";

/** An error as a user reads it: the API's Japanese message and the fix (hint). */
export default function ErrorBox({ error, testId = "error-message" }: { error: ApiError | null; testId?: string }) {
  if (!error) return null;
  return (
    <div className="error-box" role="alert" data-testid={testId}>
      <p className="error-message">{error.message}</p>
      {error.hint ? <p className="error-hint">{error.hint}</p> : null}
    </div>
  );
}

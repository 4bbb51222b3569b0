import { Suspense } from "react";
import Spinner from "@/components/Spinner";
import AnalysisView from "@/components/pages/AnalysisView";

// The file and the conversation are in the query string (/analysis/?data=…&thread=…): a static
// export has no dynamic routes, and a reload opens both again.
export default function AnalysisPage() {
  return (
    <Suspense fallback={<Spinner label="読み込んでいます…" />}>
      <AnalysisView />
    </Suspense>
  );
}

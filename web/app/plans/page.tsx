import { Suspense } from "react";
import Spinner from "@/components/Spinner";
import PlansView from "@/components/pages/PlansView";

// The run shown is in the query string (/plans/?run=run_…): a static export has no dynamic routes.
export default function PlansPage() {
  return (
    <Suspense fallback={<Spinner label="読み込んでいます…" />}>
      <PlansView />
    </Suspense>
  );
}

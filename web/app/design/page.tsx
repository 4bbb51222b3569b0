import { Suspense } from "react";
import Spinner from "@/components/Spinner";
import DesignView from "@/components/pages/DesignView";

// The draft shown is in the query string (/design/?draft=d-…): a static export has no dynamic routes.
export default function DesignPage() {
  return (
    <Suspense fallback={<Spinner label="読み込んでいます…" />}>
      <DesignView />
    </Suspense>
  );
}

import { Suspense } from "react";
import Spinner from "@/components/Spinner";
import HistoryView from "@/components/pages/HistoryView";

// The filters are in the query string (/history/?q=…&kind=…): a reload keeps them.
export default function HistoryPage() {
  return (
    <Suspense fallback={<Spinner label="読み込んでいます…" />}>
      <HistoryView />
    </Suspense>
  );
}

import ApprovalsView from "@/components/pages/ApprovalsView";

export default function ApprovalsPage() {
  return <ApprovalsView />;
}

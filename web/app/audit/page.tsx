import AuditView from "@/components/pages/AuditView";

export default function AuditPage() {
  return <AuditView />;
}

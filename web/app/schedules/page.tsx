import SchedulesView from "@/components/pages/SchedulesView";

export default function SchedulesPage() {
  return <SchedulesView />;
}

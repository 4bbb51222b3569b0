export default function ResearchPage() {
  return <h1>リサーチ</h1>;
}

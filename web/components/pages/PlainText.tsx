/** Text with its line breaks kept (a Plan output); React escapes it, so no HTML reaches the DOM. */
export default function PlainText({ text, className }: { text: string; className?: string }) {
  return <div className={className ? `plain-text ${className}` : "plain-text"}>{text}</div>;
}

/** A search snippet whose query terms the API wrapped in <em>; shown as text, never as HTML. */
export function Highlighted(props: { snippet: string }) {
  const parts = props.snippet.split(/<em>(.*?)<\/em>/g);
  return <span>{parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part))}</span>;
}

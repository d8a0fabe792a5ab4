import { snippetParts } from './snippet-parts.ts';

/** A search snippet whose query terms the API wrapped in <em>; shown as text, never as HTML. */
export function Highlighted(props: { snippet: string }) {
  return (
    <span>
      {snippetParts(props.snippet).map((part, i) => (part.marked ? <mark key={i}>{part.text}</mark> : part.text))}
    </span>
  );
}

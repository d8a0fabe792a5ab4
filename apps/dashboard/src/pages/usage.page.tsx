import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.ts';
import { DataTable } from '../components/data-table.tsx';
import { Empty, Loading, Notice } from '../components/feedback.tsx';
import type { Usage } from '../types.ts';

function Bars(props: { values: number[]; minutes: string[]; label: string }) {
  const max = Math.max(1, ...props.values);
  const width = 4;
  return (
    <svg
      class="bars"
      viewBox={`0 0 ${props.values.length * width} 40`}
      preserveAspectRatio="none"
      role="img"
      aria-label={props.label}
    >
      {props.values.map((v, i) => {
        const h = v === 0 ? 0 : Math.max(2, (v / max) * 40);
        return (
          <rect key={props.minutes[i]} x={i * width} y={40 - h} width={width - 1} height={h}>
            <title>{`${new Date(props.minutes[i] ?? '').toLocaleTimeString()}: ${v} requests`}</title>
          </rect>
        );
      })}
    </svg>
  );
}

export function UsagePage() {
  const [data, setData] = useState<Usage | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const load = () =>
      api<Usage>('GET', '/dashboard/api/usage').then(
        (r) => {
          setData(r);
          setError(null);
        },
        (e) => setError(errorText(e)),
      );
    void load();
    const timer = setInterval(load, 30_000);
    return () => clearInterval(timer);
  }, []);

  return (
    <section>
      <h1>Usage</h1>
      <p class="muted">Requests per minute per API key over the last hour (the rate limiter's counts).</p>
      {error && <Notice kind="error">{error}</Notice>}
      {!data ? (
        error ? null : (
          <Loading />
        )
      ) : data.keys.length === 0 ? (
        <Empty>No API keys in this workspace, so no usage.</Empty>
      ) : (
        <DataTable
          caption="Requests per minute per key"
          columns={['Key', 'Requests in the last hour', 'Peak per minute', 'Per minute, oldest to newest']}
        >
          {[...data.keys]
            .sort((a, b) => b.total - a.total)
            .map((k) => (
              <tr key={k.key_id} class={k.revoked_at ? 'revoked' : undefined}>
                <td>
                  {k.name} <code class="small">{k.prefix}…</code>
                  {k.revoked_at && <span class="muted small"> (revoked)</span>}
                </td>
                <td>{k.total}</td>
                <td>{Math.max(0, ...k.per_minute)}</td>
                <td class="bars-cell">
                  <Bars values={k.per_minute} minutes={data.minutes} label={`Requests per minute of ${k.name}`} />
                </td>
              </tr>
            ))}
        </DataTable>
      )}
    </section>
  );
}

/** Pages live under /dashboard/…; links change the address without reloading. */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/dashboard';

function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return path === '' ? '/' : path;
}

export function navigate(to: string): void {
  history.pushState(null, '', `${BASE}${to}`);
  scrollTo(0, 0);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): { path: string; query: URLSearchParams } {
  const [state, setState] = useState(() => ({ path: currentPath(), query: new URLSearchParams(location.search) }));
  useEffect(() => {
    const update = () => setState({ path: currentPath(), query: new URLSearchParams(location.search) });
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return state;
}

export function Link(
  props: { href: string; children: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'>,
) {
  const { href, children, ...rest } = props;
  return (
    <a
      {...rest}
      href={`${BASE}${href}`}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

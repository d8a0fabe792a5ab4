import { useEffect, useState } from 'preact/hooks';
import { api, onPasswordChangeRequired, onSignedOut, useSession } from './api.ts';
import { Loading } from './components/feedback.tsx';
import { connectLiveEvents } from './live-events.ts';
import { AccountPage } from './pages/account.page.tsx';
import { AuditPage } from './pages/audit.page.tsx';
import { DocumentPage } from './pages/document.page.tsx';
import { DocumentsPage } from './pages/documents.page.tsx';
import { KeysPage } from './pages/keys.page.tsx';
import { PasswordChangePage } from './pages/password-change.page.tsx';
import { PipelinePage } from './pages/pipeline.page.tsx';
import { SearchPage } from './pages/search.page.tsx';
import { SignInPage } from './pages/sign-in.page.tsx';
import { SourcesPage } from './pages/sources.page.tsx';
import { UsagePage } from './pages/usage.page.tsx';
import { WebhooksPage } from './pages/webhooks.page.tsx';
import { Link, navigate, usePath } from './router.tsx';
import type { SessionInfo } from './types.ts';

const WORKSPACE_KEY = 'kb-dashboard-workspace';

/** The pages in the navigation, in order. */
const NAV = [
  { href: '/documents', label: 'Documents' },
  { href: '/search', label: 'Search' },
  { href: '/audit', label: 'Audit log' },
  { href: '/sources', label: 'Sources' },
  { href: '/pipeline', label: 'Pipeline' },
  { href: '/usage', label: 'Usage' },
  { href: '/settings/api-keys', label: 'Settings › API keys' },
  { href: '/settings/webhooks', label: 'Settings › Webhooks' },
  { href: '/settings/account', label: 'Settings › Account' },
] as const;

function Page(props: { session: SessionInfo }) {
  const { path, query } = usePath();
  const doc = /^\/documents\/([^/]+)$/.exec(path);
  if (doc?.[1]) return <DocumentPage id={decodeURIComponent(doc[1])} query={query} account={props.session.account} />;
  switch (path) {
    case '/':
    case '/documents':
      return <DocumentsPage />;
    case '/search':
      return <SearchPage />;
    case '/audit':
      return <AuditPage query={query} account={props.session.account} />;
    case '/sources':
      return <SourcesPage />;
    case '/pipeline':
      return <PipelinePage account={props.session.account} />;
    case '/usage':
      return <UsagePage />;
    case '/settings/api-keys':
      return <KeysPage account={props.session.account} />;
    case '/settings/webhooks':
      return <WebhooksPage />;
    case '/settings/account':
      return <AccountPage account={props.session.account} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page at this address. <Link href="/documents">Go to the documents</Link>.
          </p>
        </section>
      );
  }
}

export function App() {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const { path } = usePath();

  const adopt = (s: SessionInfo) => {
    // The workspace chosen last in this tab, when the account still has it.
    const remembered = sessionStorage.getItem(WORKSPACE_KEY);
    const workspace = remembered && s.account.workspaces.includes(remembered) ? remembered : s.workspace;
    useSession(s.csrf_token, workspace);
    setSession({ ...s, workspace });
  };

  // The workspace's live events, for the pages to follow, while someone is signed in.
  const liveWorkspace = session ? session.workspace : null;
  useEffect(() => (liveWorkspace ? connectLiveEvents(liveWorkspace) : undefined), [liveWorkspace]);

  useEffect(() => {
    api<SessionInfo>('GET', '/dashboard/api/session').then(adopt, () => setSession(null));
    const stopSignedOut = onSignedOut(() => {
      setNotice('Your session ended; sign in again.');
      setSession(null);
    });
    // Should a request still find the password to change (the session read said otherwise), show the form, not an error.
    const stopPasswordChange = onPasswordChangeRequired(() =>
      setSession((s) => (s ? { ...s, password_change_required: true } : s)),
    );
    return () => {
      stopSignedOut();
      stopPasswordChange();
    };
  }, []);

  const signOut = async () => {
    try {
      await api('DELETE', '/dashboard/api/session');
    } finally {
      sessionStorage.removeItem(WORKSPACE_KEY);
      useSession('', '');
      setNotice('You are signed out.');
      setSession(null);
      navigate('/');
    }
  };

  if (session === undefined) return <Loading />;
  if (session === null) {
    return (
      <SignInPage
        notice={notice}
        onSignedIn={(s) => {
          setNotice(undefined);
          adopt(s);
        }}
      />
    );
  }

  if (session.password_change_required) {
    return (
      <PasswordChangePage
        account={session.account}
        onSignOut={signOut}
        onChanged={() => setSession({ ...session, password_change_required: false })}
      />
    );
  }

  const switchWorkspace = (workspace: string) => {
    sessionStorage.setItem(WORKSPACE_KEY, workspace);
    useSession(session.csrf_token, workspace);
    setSession({ ...session, workspace });
    navigate('/documents');
  };

  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">Knowledge base</span>
        {session.account.workspaces.length > 1 ? (
          <label class="workspace">
            Workspace
            <select value={session.workspace} onChange={(e) => switchWorkspace(e.currentTarget.value)}>
              {session.account.workspaces.map((w) => (
                <option key={w} value={w}>
                  {w}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <span class="workspace">
            Workspace <strong>{session.workspace}</strong>
          </span>
        )}
        <span class="account">
          {session.account.email} ({session.account.role})
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav class="sidebar" aria-label="Pages">
        <ul>
          {NAV.map((item) => {
            const current =
              path === item.href || (item.href === '/documents' && (path === '/' || path.startsWith('/documents/')));
            return (
              <li key={item.href}>
                <Link href={item.href} aria-current={current ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      <main id="main" class="content" key={session.workspace}>
        <Page session={session} />
      </main>
    </div>
  );
}

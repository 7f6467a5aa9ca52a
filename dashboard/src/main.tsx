// The dashboard: sign in, then the operator's pages (admin token) or the key holder's page (a Tollgate
// key). It talks only to the public APIs (/v1 and /admin/v1), with hash routes (#/keys, #/usage, ...):
// nothing secret ever goes in the URL.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { setUnauthorizedHandler } from './api.js';
import { KeysPage } from './pages/keys.js';
import { MePage } from './pages/me.js';
import { OverviewPage } from './pages/overview.js';
import { ProvidersPage } from './pages/providers.js';
import { SignIn } from './pages/sign-in.js';
import { UsagePage } from './pages/usage.js';
import { clearSession, loadSession, type Session } from './session.js';

const OPERATOR_PAGES = [
  { route: '', label: 'Overview', Page: OverviewPage },
  { route: 'keys', label: 'Keys', Page: KeysPage },
  { route: 'usage', label: 'Usage', Page: UsagePage },
  { route: 'providers', label: 'Providers', Page: ProvidersPage },
] as const;

function currentRoute(): string {
  return location.hash.replace(/^#\/?/, '') || '';
}

function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [route, setRoute] = useState(currentRoute);
  const [notice, setNotice] = useState<string | undefined>();

  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const signOut = (why?: string) => {
    clearSession();
    setSession(undefined);
    setNotice(why);
    if (location.hash) location.hash = '';
  };
  useEffect(() => setUnauthorizedHandler(() => signOut('Your session ended: the token is no longer accepted. Sign in again.')), []);

  if (!session) return <SignIn notice={notice} onSignedIn={(s) => (setNotice(undefined), setSession(s))} />;
  const page = OPERATOR_PAGES.find((p) => p.route === route) ?? OPERATOR_PAGES[0];
  return (
    <div class="shell">
      <header>
        <strong>Tollgate</strong>
        <nav>
          {session.kind === 'operator' &&
            OPERATOR_PAGES.map((p) => (
              <a href={`#/${p.route}`} class={p === page ? 'active' : ''} data-nav={p.route || 'overview'}>
                {p.label}
              </a>
            ))}
        </nav>
        <span class="hint">{session.kind === 'operator' ? 'Operator' : 'Key holder'}</span>
        <button class="link" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main>{session.kind === 'keyholder' ? <MePage token={session.token} /> : <page.Page token={session.token} />}</main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);

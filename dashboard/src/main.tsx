// The dashboard: sign in, then the operator's pages (admin token) or the key holder's page (a Tollgate
// key). It talks only to the public APIs (/v1 and /admin/v1), with hash routes (#/keys, #/usage, ...).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { MePage } from './pages/me.js';
import { SignIn } from './pages/sign-in.js';
import { clearSession, loadSession, type Session } from './session.js';

const OPERATOR_PAGES = [] as const;

function currentRoute(): string {
  return location.hash.replace(/^#\/?/, '') || '';
}

function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [route, setRoute] = useState(currentRoute);

  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  if (!session) return <SignIn onSignedIn={setSession} />;
  const signOut = () => {
    clearSession();
    setSession(undefined);
    location.hash = '';
  };
  return (
    <div class="shell">
      <header>
        <strong>Tollgate</strong>
        <nav>{session.kind === 'operator' && OPERATOR_PAGES.length > 0 && <span>{route}</span>}</nav>
        <button class="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>{session.kind === 'keyholder' ? <MePage token={session.token} onSignedOut={signOut} /> : <p>Operator pages follow.</p>}</main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);

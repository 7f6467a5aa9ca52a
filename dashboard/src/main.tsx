// The dashboard: sign in, then the operator's pages (admin token), the account's own view (an account
// token, tga-…) or the key holder's page (a Tollgate key, tg-…). It talks only to the public APIs (/v1 and
// /admin/v1), with hash routes (#/accounts, #/keys, #/usage, ..., and a record's own page:
// #/accounts/<account id>, #/keys/<key id>, #/usage/<request id>): nothing secret ever goes in the URL.
import { render, type FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { setUnauthorizedHandler } from './api.js';
import { AccountPage } from './pages/account-page.js';
import { AccountSelfPage } from './pages/account-self.js';
import { AccountsPage } from './pages/accounts.js';
import { CodesPage } from './pages/codes.js';
import { KeyPage } from './pages/key-page.js';
import { KeysPage } from './pages/keys.js';
import { MePage } from './pages/me.js';
import { OverviewPage } from './pages/overview.js';
import { ProvidersPage } from './pages/providers.js';
import { RequestPage } from './pages/request.js';
import { SessionPage, SessionsPage } from './pages/sessions.js';
import { SignIn } from './pages/sign-in.js';
import { UsagePage } from './pages/usage.js';
import { WebhooksPage } from './pages/webhooks.js';
import { parseRoute } from './route.js';
import { clearSession, loadSession, type Session } from './session.js';

type Page = FunctionComponent<{ token: string }>;
type RecordPage = FunctionComponent<{ token: string; id: string }>;

/** The operator's pages; `Record` shows one record of the page's kind (#/keys/<id>, #/usage/<id>). */
const OPERATOR_PAGES: ReadonlyArray<{ route: string; label: string; Page: Page; Record?: RecordPage }> = [
  { route: '', label: 'Overview', Page: OverviewPage },
  { route: 'accounts', label: 'Accounts', Page: AccountsPage, Record: AccountPage },
  { route: 'keys', label: 'Keys', Page: KeysPage, Record: KeyPage },
  { route: 'codes', label: 'Codes', Page: CodesPage },
  { route: 'usage', label: 'Usage', Page: UsagePage, Record: RequestPage },
  { route: 'sessions', label: 'Sessions', Page: SessionsPage, Record: SessionPage },
  { route: 'providers', label: 'Providers', Page: ProvidersPage },
  { route: 'webhooks', label: 'Webhooks', Page: WebhooksPage },
];

const SESSION_LABELS = { operator: 'Operator', account: 'Account', keyholder: 'Key holder' } as const;

const currentRoute = () => parseRoute(location.hash);

function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [route, setRoute] = useState(currentRoute);
  const [notice, setNotice] = useState<string | undefined>();

  useEffect(() => {
    const onHash = () => {
      setRoute(currentRoute());
      // A new page starts at its top, as a link to another document would.
      scrollTo(0, 0);
    };
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
  const page = OPERATOR_PAGES.find((p) => p.route === route.page) ?? OPERATOR_PAGES[0]!;
  const content =
    session.kind === 'keyholder' ? (
      <MePage token={session.token} />
    ) : session.kind === 'account' ? (
      <AccountSelfPage token={session.token} />
    ) : route.id !== undefined && page.Record ? (
      <page.Record token={session.token} id={route.id} />
    ) : (
      <page.Page token={session.token} />
    );
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
        <span class="hint">{SESSION_LABELS[session.kind]}</span>
        <button class="link" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main>{content}</main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);

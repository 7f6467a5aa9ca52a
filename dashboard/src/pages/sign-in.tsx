// Signing in: the admin token (operator view), an account token (the account's own view) or a Tollgate key
// (key holder view). The token is checked against the API before it is kept, and kept only in this tab's
// session storage.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson, request } from '../api.js';
import { kindOfToken, saveSession, type Session, type SessionKind } from '../session.js';

/** Where each kind of token is checked before it is kept. */
const CHECK: Record<SessionKind, string> = { operator: '/admin/v1/keys?limit=1', account: '/v1/account', keyholder: '/v1/key' };
const INVALID: Record<SessionKind, string> = {
  operator: 'That admin token is not valid.',
  account: 'That account token is not valid (unknown, or replaced by a newer one).',
  keyholder: 'That key is not valid (unknown, revoked or expired).',
};

export function SignIn({ onSignedIn, notice }: { onSignedIn: (session: Session) => void; notice?: string | undefined }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  /** Whether this gateway has an operator view at all: /admin answers 404 when admin.token is unset. */
  const [adminEnabled, setAdminEnabled] = useState<boolean | undefined>();

  useEffect(() => {
    getJson<{ operator: boolean }>('/dashboard/config.json').then(
      (config) => setAdminEnabled(config.operator),
      () => setAdminEnabled(undefined),
    );
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    const value = token.trim();
    if (!value) return;
    const kind = kindOfToken(value);
    if (kind === 'operator' && adminEnabled === false) {
      setError('This gateway has no operator view (admin.token is not set), and that is neither a Tollgate key (tg-…) nor an account token (tga-…).');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await request(CHECK[kind], { token: value, quiet: true });
      const session = { kind, token: value } as const;
      saveSession(session);
      onSignedIn(session);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && kind === 'operator') {
        setError('This gateway has no operator view (admin.token is not set). Sign in with a Tollgate key or an account token instead.');
      } else if (e instanceof ApiError && e.status === 401) {
        setError(INVALID[kind]);
      } else {
        setError(`Could not sign in: ${(e as Error).message}`);
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in">
      <h1>Tollgate</h1>
      {notice && !error && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit}>
        <label for="token">{adminEnabled === false ? 'Your Tollgate key or account token' : 'Admin token, account token or Tollgate key'}</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          placeholder={adminEnabled === false ? 'tg-… or tga-…' : 'admin token, tga-… or tg-…'}
        />
        <button type="submit" disabled={busy || token.trim() === ''}>
          Sign in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {adminEnabled === false && <p class="hint">The operator view is not enabled on this gateway.</p>}
      </form>
      <p class="hint">Kept only in this tab, and forgotten when you close it or sign out.</p>
    </main>
  );
}

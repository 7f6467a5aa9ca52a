// Who is signed in: an operator (the admin token), an account's holder (an account token, `tga-`) or a
// key holder (a Tollgate key, `tg-`). Kept only in this tab's session storage — never in a URL, a cookie
// or local storage — and gone when the tab closes.
import type { SessionKind } from './token-kind.js';

export { kindOfToken, type SessionKind } from './token-kind.js';
export type Session = { readonly kind: SessionKind; readonly token: string };

const STORAGE_KEY = 'tollgate.session';
const KINDS: readonly string[] = ['operator', 'account', 'keyholder'] satisfies SessionKind[];

export function loadSession(): Session | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Session | null;
    return value && KINDS.includes(value.kind) && typeof value.token === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

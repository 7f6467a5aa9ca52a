// Who is signed in: an operator (the admin token) or a key holder (a Tollgate key). Kept only in this
// tab's session storage — never in a URL, a cookie or local storage — and gone when the tab closes.
export type Session = { readonly kind: 'operator' | 'keyholder'; readonly token: string };

const STORAGE_KEY = 'tollgate.session';

export function loadSession(): Session | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Session | null;
    return value && (value.kind === 'operator' || value.kind === 'keyholder') && typeof value.token === 'string' ? value : undefined;
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

/** A Tollgate key looks like `tg-` and 43 base64url characters; anything else is taken as the admin token. */
export function kindOfToken(token: string): Session['kind'] {
  return /^tg-[A-Za-z0-9_-]{43}$/.test(token) ? 'keyholder' : 'operator';
}

// The admin API's bearer token check. Both sides are hashed first and the digests compared with
// timingSafeEqual: the comparison takes the same time whatever the token given, its length included.
import { createHash, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../../../errors.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** A function that throws 401 invalid_admin_token unless `authorization` carries the token. */
export function adminTokenCheck(token: string): (authorization: string | undefined) => void {
  const expected = digest(token);
  return function requireAdminToken(authorization) {
    const given = authorization ? BEARER.exec(authorization)?.[1] : undefined;
    // Hashed even when absent, so a missing token costs what a wrong one does.
    const matches = timingSafeEqual(digest(given ?? ''), expected);
    if (!matches || given === undefined) throw new GatewayError('invalid_admin_token');
  };
}

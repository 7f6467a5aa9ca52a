// `server.trust_proxy`: whose X-Forwarded-For the gateway believes when it logs a request's client
// address. Off by default: a client could otherwise write any address it likes into the header. The
// header itself is read by Fastify (proxy-addr); this only checks what the operator wrote.
import { isIP } from 'node:net';

/** false: the socket's peer; true: every hop (the left-most X-Forwarded-For entry); a number: that many hops; a list: those proxies. */
export type TrustProxy = boolean | number | readonly string[];

/** proxy-addr's names for address ranges: 127.0.0.0/8 and ::1, 169.254.0.0/16 and fe80::/10, private networks. */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

export const PROXY_ADDRESS_HINT = 'expected an IP address, a CIDR range such as 10.0.0.0/8, or loopback, linklocal or uniquelocal';

/** An IP address, ADDRESS/BITS, or one of proxy-addr's range names (a subset of what proxy-addr takes). */
export function isProxyAddress(entry: string): boolean {
  if (RANGE_NAMES.has(entry)) return true;
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0 || address.includes('%')) return false;
  if (slash < 0) return true;
  const bits = entry.slice(slash + 1);
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * A string (what `${VAR}` leaves) read as it would be written in YAML: `true`, `false`, a hop count, or
 * addresses separated by commas; empty is off. Anything else is left for the schema to refuse.
 */
export function readTrustProxyText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text === '' || text === 'false') return false;
  if (text === 'true') return true;
  if (/^\d+$/.test(text)) return Number(text);
  // One word that is not an address stays a string: the error then lists what is accepted.
  return text.includes(',') || isProxyAddress(text) ? text.split(',').map((entry) => entry.trim()) : value;
}

/** 0 hops and an empty list trust nobody: the same as false. */
export function normaliseTrustProxy(value: boolean | number | readonly string[]): TrustProxy {
  if (value === 0 || (Array.isArray(value) && value.length === 0)) return false;
  return value;
}

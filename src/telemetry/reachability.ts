// Whether a dependency (the database, Redis) answers, as the on-call engineer reads it in the log: one
// warn line with the cause when it stops answering, one info line when it answers again — once per
// change, however many requests fail in between (a flood of failures must not flood the log). The
// places that talk to the dependency report what they see (`failed`, `succeeded`); this decides when
// that is news. A dependency reached over several connections (Redis: the rate limiter's, the shared
// cool-downs' two) is down while any of them is, so it is back only once all of them are: connections
// that reconnect one after another do not make it flap.
import type { Logger } from '../log.js';
import { redactDatabaseUrl } from '../storage/database-url.js';
import type { ReachabilityObserver } from '../storage/types.js';

export interface ReachabilityOptions {
  readonly log: Logger;
  /** The `dependency` field of both lines: `database` or `redis`. */
  readonly dependency: string;
  /** Where it is (a URL): redacted, it goes into both lines. */
  readonly url: string;
  /** The warn line's message: what it means while it lasts. */
  readonly downMessage: string;
  /** The info line's message. */
  readonly upMessage: string;
}

/** The cause's text is kept short: one line, not a stack or a server's whole error report. */
const MAX_CAUSE_LENGTH = 300;

export class Reachability implements ReachabilityObserver {
  /** The connections (by name) that failed and have not answered since; empty: reachable. */
  private readonly failing = new Set<string>();
  private downSince = 0;
  private closed = false;

  constructor(private readonly options: ReachabilityOptions) {}

  get reachable(): boolean {
    return this.failing.size === 0;
  }

  /** `connection` could not reach the dependency (or lost it): the first such failure is logged. */
  failed(error: unknown, connection = ''): void {
    if (this.closed || this.failing.has(connection)) return;
    this.failing.add(connection);
    if (this.failing.size > 1) return;
    this.downSince = Date.now();
    const { log, dependency, url, downMessage } = this.options;
    log.warn({ dependency, url: redactDatabaseUrl(url), ...describeCause(error) }, downMessage);
  }

  /** `connection` answered: once every failed connection has, the return is logged. Cheap when nothing failed. */
  succeeded(connection = ''): void {
    if (this.failing.size === 0 || !this.failing.delete(connection) || this.failing.size > 0 || this.closed) return;
    const { log, dependency, url, upMessage } = this.options;
    log.info({ dependency, url: redactDatabaseUrl(url), downMs: Date.now() - this.downSince }, upMessage);
  }

  /** Shutting down: connections closing on purpose are not news. */
  close(): void {
    this.closed = true;
  }
}

/** `cause` (the error's message, without a password a URL in it may carry) and `code` (errno or SQLSTATE). */
export function describeCause(error: unknown): { cause: string; code?: string } {
  const code = (error as { code?: unknown } | null)?.code;
  let message = error instanceof Error ? error.message : String(error);
  // Node's connect to a name with several addresses (localhost: ::1 and 127.0.0.1) fails with an
  // AggregateError whose own message is empty: its errors say what happened.
  if (!message && error instanceof AggregateError) message = error.errors.map((inner: unknown) => (inner instanceof Error ? inner.message : String(inner))).join('; ');
  const cause = redactDatabaseUrl(message.replace(/\s+/g, ' ').trim() || 'unknown error').slice(0, MAX_CAUSE_LENGTH);
  return typeof code === 'string' && code !== '' ? { cause, code } : { cause };
}

// The process logger: JSON lines on stderr (stdout stays clean for `--json` output). Prompts and
// secrets are never passed to it: request lines carry ids, token counts and money only, and errors
// are the gateway's own or undici's (which carry no request headers). No redaction pass is needed on
// the hot path for that reason; keep it so when adding log fields.
import pino, { type Logger } from 'pino';
import { StartupError } from './startup-error.js';

export type { Logger };

/** From the most to the least verbose; `silent` logs nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** The level from TOLLGATE_LOG_LEVEL (unset or empty: info); an unknown one is a startup error listing the valid ones. */
export function logLevelFrom(env: NodeJS.ProcessEnv = process.env): string {
  const level = env.TOLLGATE_LOG_LEVEL || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new StartupError(`TOLLGATE_LOG_LEVEL: unknown level "${level}" (one of: ${LOG_LEVELS.join(', ')})`);
  }
  return level;
}

export function createLogger(level = logLevelFrom()): Logger {
  return pino(
    {
      level,
      base: { service: 'tollgate' },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}

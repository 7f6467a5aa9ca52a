// The process logger: JSON lines (or pino-pretty's lines) on stderr — stdout stays clean for `--json`
// output. Request lines carry ids, token counts and money; prompts and completions only with
// `log.bodies: true`. Secrets are never passed to it, and as a second line of defence the fields that
// could hold one (an Authorization header, a key secret, a token) are censored by pino's redaction,
// which costs nothing on lines that do not carry those fields.
import pino, { type Logger } from 'pino';
import { StartupError } from './startup-error.js';

export type { Logger };

/** From the most to the least verbose; `silent` logs nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export type LogFormat = 'json' | 'pretty';

/**
 * Censored at the top of a line and inside the objects a line may carry (headers, a logged request body). Exact
 * paths, not wildcards: pino's redaction of a `*.field` path walks every line and costs ~15 µs each,
 * exact paths cost nothing measurable (bench/telemetry-micro.mjs).
 */
const SECRET_FIELDS = ['authorization', 'apiKey', 'api_key', 'key', 'secret', 'token', 'adminToken', 'password', '"x-api-key"'];
export const REDACTED_PATHS = SECRET_FIELDS.flatMap((field) => {
  const at = field.startsWith('"') ? `[${field}]` : `.${field}`;
  return [field.startsWith('"') ? `headers${at}` : field, `headers${at}`, `req.headers${at}`, `body${at}`];
}).filter((path, i, all) => all.indexOf(path) === i);

/**
 * The level: TOLLGATE_LOG_LEVEL, else LOG_LEVEL, else the config's `log.level`, else info (an empty
 * variable counts as unset). An unknown one is a startup error naming where it came from.
 */
export function logLevelFrom(env: NodeJS.ProcessEnv = process.env, configured?: string): string {
  const [source, level] = env.TOLLGATE_LOG_LEVEL
    ? ['TOLLGATE_LOG_LEVEL', env.TOLLGATE_LOG_LEVEL]
    : env.LOG_LEVEL
      ? ['LOG_LEVEL', env.LOG_LEVEL]
      : ['log.level', configured || 'info'];
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new StartupError(`${source}: unknown level "${level}" (one of: ${LOG_LEVELS.join(', ')})`);
  }
  return level;
}

export interface LoggerOptions {
  readonly level?: string;
  /** Default: pretty when stderr (where the lines go) is a terminal, else json. */
  readonly format?: LogFormat | undefined;
}

export async function createLogger(options: LoggerOptions = {}): Promise<Logger> {
  const level = options.level ?? logLevelFrom();
  const format = options.format ?? (process.stderr.isTTY ? 'pretty' : 'json');
  const settings: pino.LoggerOptions = {
    level,
    base: { service: 'tollgate' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (format === 'pretty') {
    // Loaded only when wanted; it formats in this process (no worker thread), writing to stderr
    // synchronously (a terminal's reader, not the hot path: no line is lost when the process exits).
    const { default: pretty } = await import('pino-pretty');
    return pino(settings, pretty({ destination: 2, colorize: process.stderr.isTTY === true, sync: true, ignore: 'pid,hostname,service' }));
  }
  return pino(settings, pino.destination({ dest: 2, sync: false }));
}

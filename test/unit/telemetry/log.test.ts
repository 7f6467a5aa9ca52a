// The process logger: where its level comes from, its two formats, and the censoring of secret fields
// (the logger runs in a child process, as the server does, writing to stderr).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { logLevelFrom } from '../../../src/log.js';
import { StartupError } from '../../../src/startup-error.js';

const LOG_MODULE = fileURLToPath(new URL('../../../src/log.ts', import.meta.url));

/** Runs createLogger(options) in a child and logs one line with secret-looking fields; returns stderr. */
function logInChild(options: object): string {
  const script = `
    const { createLogger } = await import(${JSON.stringify(LOG_MODULE)});
    const log = await createLogger(${JSON.stringify(options)});
    log.info({ requestId: 'req_1', headers: { authorization: 'Bearer tg-live-secret-1' }, body: { api_key: 'sk-body-secret-2', messages: [] }, token: 'admin-token-secret-3' }, 'hello there');
    log.flush();
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, TOLLGATE_LOG_LEVEL: '', LOG_LEVEL: '' } });
  assert.equal(child.status, 0, child.stderr);
  return child.stderr;
}

describe('logLevelFrom', () => {
  test('TOLLGATE_LOG_LEVEL, else LOG_LEVEL, else the config, else info', () => {
    assert.equal(logLevelFrom({ TOLLGATE_LOG_LEVEL: 'debug', LOG_LEVEL: 'warn' }, 'error'), 'debug');
    assert.equal(logLevelFrom({ LOG_LEVEL: 'warn' }, 'error'), 'warn');
    assert.equal(logLevelFrom({ TOLLGATE_LOG_LEVEL: '', LOG_LEVEL: '' }, 'error'), 'error');
    assert.equal(logLevelFrom({}, undefined), 'info');
  });

  test('an unknown LOG_LEVEL is a startup error naming the variable', () => {
    assert.throws(() => logLevelFrom({ LOG_LEVEL: 'loud' }), (e: unknown) => e instanceof StartupError && /^LOG_LEVEL: unknown level "loud"/.test(e.message));
  });
});

describe('createLogger', () => {
  test('json: one JSON line on stderr, secret fields censored', () => {
    const out = logInChild({ level: 'info', format: 'json' });
    const line = JSON.parse(out.trim()) as { msg: string; token: string; headers: { authorization: string }; body: { api_key: string } };
    assert.equal(line.msg, 'hello there');
    assert.equal(line.headers.authorization, '[redacted]');
    assert.equal(line.body.api_key, '[redacted]');
    assert.equal(line.token, '[redacted]');
    assert.doesNotMatch(out, /secret-[123]/);
  });

  test('pretty: pino-pretty lines (not JSON), secret fields censored the same way', () => {
    const out = logInChild({ level: 'info', format: 'pretty' });
    assert.match(out, /INFO.*hello there/);
    assert.throws(() => JSON.parse(out.trim()));
    assert.doesNotMatch(out, /secret-[123]/);
  });

  test('without a format, not on a terminal: json', () => {
    assert.doesNotThrow(() => JSON.parse(logInChild({ level: 'info' }).trim()));
  });
});

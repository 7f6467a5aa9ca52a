// Startup errors: one line that names what failed and why (the CLI prints it as is).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { LOG_LEVELS, logLevelFrom } from '../../src/log.js';
import { databaseError, listenError, StartupError } from '../../src/startup-error.js';

const errno = (code: string, message = `${code}: something`) => Object.assign(new Error(message), { code });

describe('listenError', () => {
  test('names the address and the reason for the usual listen failures', () => {
    assert.equal(listenError('127.0.0.1', 8080, errno('EADDRINUSE')).message, 'cannot listen on 127.0.0.1:8080: the port is in use');
    assert.match(listenError('0.0.0.0', 80, errno('EACCES')).message, /^cannot listen on 0\.0\.0\.0:80: permission denied/);
    assert.equal(listenError('::1', 8080, errno('EADDRNOTAVAIL')).message, 'cannot listen on [::1]:8080: the address is not one of this machine');
    assert.equal(listenError('nohost', 8080, errno('ENOTFOUND')).message, 'cannot listen on nohost:8080: unknown host name');
  });

  test("keeps the first line of any other error's message, and is a StartupError with the cause", () => {
    const cause = errno('EWHATEVER', 'odd failure\nsecond line');
    const error = listenError('127.0.0.1', 1, cause);
    assert.ok(error instanceof StartupError);
    assert.equal(error.message, 'cannot listen on 127.0.0.1:1: odd failure');
    assert.equal(error.cause, cause);
  });
});

describe('databaseError', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-startup-error-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('finds a regular file where a directory should be, at any depth', () => {
    const file = join(dir, 'plain');
    writeFileSync(file, '');
    const cause = new Error('EEXIST: file already exists');
    assert.equal(databaseError(`sqlite:${file}/t.db`, cause).message, `cannot open the database sqlite:${file}/t.db: ${file} is not a directory`);
    assert.equal(databaseError(`sqlite:${file}/a/b/t.db`, cause).message, `cannot open the database sqlite:${file}/a/b/t.db: ${file} is not a directory`);
  });

  test('names a database path that is a directory', () => {
    const directory = join(dir, 'd.db');
    mkdirSync(directory);
    assert.equal(databaseError(`sqlite:${directory}`, new Error('x')).message, `cannot open the database sqlite:${directory}: ${directory} is a directory, not a database file`);
  });

  test("falls back to the error's first line, and never shows a PostgreSQL password", () => {
    assert.equal(databaseError(`sqlite:${join(dir, 'ok', 't.db')}`, new Error('disk I/O error\nmore')).message, `cannot open the database sqlite:${join(dir, 'ok', 't.db')}: disk I/O error`);
    const message = databaseError('postgres://user:s3cret@db:5432/x', new Error('connect ECONNREFUSED')).message;
    assert.equal(message, 'cannot open the database postgres://***@db:5432/x: connect ECONNREFUSED');
  });
});

describe('logLevelFrom', () => {
  test('defaults to info when TOLLGATE_LOG_LEVEL is unset or empty, and accepts every pino level', () => {
    assert.equal(logLevelFrom({}), 'info');
    assert.equal(logLevelFrom({ TOLLGATE_LOG_LEVEL: '' }), 'info');
    for (const level of LOG_LEVELS) assert.equal(logLevelFrom({ TOLLGATE_LOG_LEVEL: level }), level);
  });

  test('refuses an unknown level with a StartupError listing the valid ones', () => {
    assert.throws(
      () => logLevelFrom({ TOLLGATE_LOG_LEVEL: 'verbose' }),
      (error: unknown) =>
        error instanceof StartupError && error.message === 'TOLLGATE_LOG_LEVEL: unknown level "verbose" (one of: trace, debug, info, warn, error, fatal, silent)',
    );
  });
});

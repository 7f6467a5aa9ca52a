// A dependency's reachability in the log: one warn line when it stops answering (with the cause, never a
// password), one info line when it answers again, nothing in between; several connections to it count as
// one dependency.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { describeCause, Reachability } from '../../../src/telemetry/reachability.js';

interface Line {
  level: number;
  msg: string;
  dependency: string;
  url: string;
  cause?: string;
  code?: string;
  downMs?: number;
}

function tracked(url = 'postgres://tollgate:s3cret@db.internal:5432/tollgate'): { reachability: Reachability; lines: Line[] } {
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  const reachability = new Reachability({ log, dependency: 'database', url, downMessage: 'database unavailable', upMessage: 'database answers again' });
  return { reachability, lines };
}

const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' });

describe('Reachability', () => {
  test('a run of failures is one warn line with the cause, the answer after it one info line', () => {
    const { reachability, lines } = tracked();
    reachability.succeeded();
    assert.equal(lines.length, 0, 'an answer while it answers is not news');
    for (let i = 0; i < 100; i++) reachability.failed(refused());
    assert.equal(reachability.reachable, false);
    reachability.succeeded();
    reachability.succeeded();
    assert.equal(reachability.reachable, true);
    assert.deepEqual(
      lines.map(({ level, msg, dependency, url, cause, code }) => ({ level, msg, dependency, url, cause, code })),
      [
        { level: 40, msg: 'database unavailable', dependency: 'database', url: 'postgres://***@db.internal:5432/tollgate', cause: 'connect ECONNREFUSED 10.0.0.5:5432', code: 'ECONNREFUSED' },
        { level: 30, msg: 'database answers again', dependency: 'database', url: 'postgres://***@db.internal:5432/tollgate', cause: undefined, code: undefined },
      ],
    );
    assert.ok(lines[1]!.downMs! >= 0, 'the info line says how long it was down');
  });

  test('each outage is logged again: once per change, not once ever', () => {
    const { reachability, lines } = tracked();
    for (let round = 0; round < 3; round++) {
      reachability.failed(refused());
      reachability.failed(refused());
      reachability.succeeded();
    }
    assert.deepEqual(lines.map((l) => l.level), [40, 30, 40, 30, 40, 30]);
  });

  test('several connections: down at the first failure, back only once every failed one has answered', () => {
    const { reachability, lines } = tracked('redis://127.0.0.1:6379');
    reachability.failed(refused(), 'rate-limits');
    reachability.failed(refused(), 'cooldowns');
    reachability.succeeded('rate-limits');
    reachability.failed(refused(), 'rate-limits');
    reachability.succeeded('cooldowns-subscriber');
    assert.deepEqual(lines.map((l) => l.level), [40], 'still down while one connection fails');
    reachability.succeeded('rate-limits');
    reachability.succeeded('cooldowns');
    assert.deepEqual(lines.map((l) => l.level), [40, 30]);
  });

  test('after close() (shutting down), connections closing are not news', () => {
    const { reachability, lines } = tracked();
    reachability.failed(refused());
    reachability.close();
    reachability.succeeded();
    reachability.failed(refused());
    assert.deepEqual(lines.map((l) => l.level), [40]);
  });
});

describe('describeCause', () => {
  test('the message and the code (an errno or a SQLSTATE); no code when there is none', () => {
    assert.deepEqual(describeCause(refused()), { cause: 'connect ECONNREFUSED 10.0.0.5:5432', code: 'ECONNREFUSED' });
    assert.deepEqual(describeCause(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })), {
      cause: 'terminating connection due to administrator command',
      code: '57P01',
    });
    assert.deepEqual(describeCause(new Error('Connection terminated unexpectedly')), { cause: 'Connection terminated unexpectedly' });
    assert.deepEqual(describeCause('plain text'), { cause: 'plain text' });
  });

  test('a URL with credentials in a message loses them', () => {
    const { cause } = describeCause(new Error('getaddrinfo ENOTFOUND for redis://default:hunter2@cache.internal:6379'));
    assert.equal(cause, 'getaddrinfo ENOTFOUND for redis://***@cache.internal:6379');
  });

  test("an AggregateError (a name with several addresses) gives its errors' messages; a long message is cut to one line of 300", () => {
    const both = Object.assign(new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')], ''), { code: 'ECONNREFUSED' });
    assert.deepEqual(describeCause(both), { cause: 'connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED' });
    const long = describeCause(new Error(`first line\nsecond ${'x'.repeat(500)}`)).cause;
    assert.equal(long.length, 300);
    assert.ok(long.startsWith('first line second x'));
    assert.deepEqual(describeCause(new Error('')), { cause: 'unknown error' });
  });
});

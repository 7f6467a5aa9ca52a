// `tollgate serve --workers N` end to end, on SQLite and on PostgreSQL: one port served by N worker
// processes (each request's log line names its worker), a worker killed with -9 replaced by the
// primary, SIGTERM draining the streams in flight in every worker before all exit 0, and the ledger
// exact throughout (cached == derived, conservation, one usage row per capture).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { costOf, extendConfig, waitFor } from '../support/e2e.js';
import { mockConfig, runCli, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { chatChunks, makeUsage, slowDrip, sseFromChunks, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { usdToNano } from '../support/money.js';
import { freshPgSchema, postgresSkipReason, type PgSchema } from '../support/postgres.js';

const pgSkip = await postgresSkipReason();

interface LogLine {
  msg?: string;
  level?: number;
  worker?: number;
  pids?: number[];
}

function lines(gw: GatewayProcess): LogLine[] {
  return gw.logs.flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Workers of the primary, from its 'tollgate listening' line. */
function workerPids(gw: GatewayProcess): number[] {
  const pids = lines(gw).find((l) => l.msg === 'tollgate listening')?.pids;
  assert.ok(pids, 'the primary lists its workers');
  return pids;
}

/** Which workers wrote 'request' lines (one per billed request). */
function servingWorkers(gw: GatewayProcess): Set<number> {
  return new Set(lines(gw).flatMap((l) => (l.msg === 'request' && l.worker !== undefined ? [l.worker] : [])));
}

/** `count` chat calls, `concurrency` at a time on separate connections; returns the Σ of usage.cost. */
async function chatMany(gw: GatewayProcess, key: string, count: number, concurrency: number): Promise<number> {
  let total = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      // One client per lane: separate keep-alive connections, which the cluster spreads over the workers.
      const client = new OpenAI({ apiKey: key, baseURL: gw.baseURL, maxRetries: 0 });
      while (next < count) {
        next += 1;
        const reply = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 20 });
        total += costOf(reply.usage);
      }
    }),
  );
  return total;
}

describe('serve --workers 2 on SQLite', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    // gpt-nokey's only provider has no api_key: a disabled model, for the start-up warning.
    const config = extendConfig(mockConfig(mock), {
      providers: '  nokey:\n    kind: openai\n    api_key: ""\n',
      models: '  gpt-nokey:\n    upstreams: [{ provider: nokey, model: gpt-4o }]\n    price: { input: 1, output: 2 }\n    max_output_tokens: 100\n',
    });
    gw = await startGateway({ config, args: ['--workers', '2'] });
  });

  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 15_000);
  });

  test('the disabled models are said once, by the primary, not once per worker', () => {
    const said = lines(gw).filter((l) => l.msg?.includes('model gpt-nokey disabled'));
    assert.equal(said.length, 1, JSON.stringify(said));
    assert.equal(said[0]!.level, 40, 'a warn line');
    assert.equal(said[0]!.worker, undefined, 'written by the primary');
  });

  test('both workers serve one port; a worker killed with -9 is replaced; SIGTERM drains both; the ledger is exact', { timeout: 90_000 }, async () => {
    const [first, second] = workerPids(gw);
    assert.ok(first && second && first !== second, 'two distinct worker processes');
    const key = await gw.createKey({ name: 'workers', balance: 5 });
    let charged = await chatMany(gw, key.key, 60, 8);
    assert.deepEqual([...servingWorkers(gw)].sort(), [first, second].sort(), 'requests were served by both workers');

    // A crash: the primary starts a replacement, which serves too.
    process.kill(first, 'SIGKILL');
    const replaced = await waitFor(() => lines(gw).find((l) => l.msg === 'worker replaced'), 15_000, 50);
    assert.ok(replaced?.worker && replaced.worker !== first && replaced.worker !== second, 'a new worker took its place');
    const replacement = replaced.worker;
    assert.ok(!alive(first));
    charged += await chatMany(gw, key.key, 60, 8);
    assert.ok(servingWorkers(gw).has(replacement), 'the replacement serves requests');

    // SIGTERM with slow streams in flight on every worker: they finish, then everything exits 0.
    const USAGE = makeUsage(11, 7);
    mock.handle(slowDrip(150, sseFromChunks(chatChunks({ content: ['one', ' two', ' three', ' four', ' five'], usage: USAGE }))));
    const streams = Array.from({ length: 6 }, async () => {
      const client = new OpenAI({ apiKey: key.key, baseURL: gw.baseURL, maxRetries: 0 });
      const stream = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Stream' }], max_tokens: 20, stream: true });
      let cost: number | undefined;
      for await (const chunk of stream) if (chunk.usage) cost = costOf(chunk.usage);
      return cost;
    });
    await waitFor(() => mock.requests.filter((r) => r.body?.stream === true).length === 6, 10_000, 20);
    const code = await gw.stop('SIGTERM');
    const costs = await Promise.all(streams);
    assert.equal(code, 0, 'the primary exits 0 once every worker drained');
    for (const cost of costs) assert.ok(cost !== undefined && cost > 0, 'every stream in flight finished with its usage');
    charged += costs.reduce<number>((sum, c) => sum + (c ?? 0), 0);
    for (const pid of [second, replacement]) assert.ok(!alive(pid), `worker ${pid} exited`);

    const audit = gw.audit(key.id);
    assert.deepEqual({ balance: audit.balance, held: audit.held, spent: audit.spent }, audit.derived, 'cached == derived');
    assert.equal(audit.activeHolds, 0);
    assert.equal(audit.spent, charged, 'Σ usage.cost the clients saw == spent');
    assert.equal(audit.balance, usdToNano(5) - charged, 'conservation, to the nano-dollar');
    assert.equal(audit.captures, audit.usageRows, 'one usage row per capture');
    assert.equal(audit.captures, 126);
  });
});

describe('serve --workers on PostgreSQL', { skip: pgSkip }, () => {
  let mock: MockUpstream;
  let schema: PgSchema;
  let gw: GatewayProcess;

  before(async () => {
    mock = await startMockUpstream();
    schema = await freshPgSchema();
    gw = await startGateway({ config: mockConfig(mock), database: schema.url, args: ['--workers', '2'] });
  });

  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 15_000);
    await schema?.drop();
  });

  test('both workers group-commit to one database; SIGTERM stops both; conservation exact', { timeout: 60_000 }, async () => {
    const pids = workerPids(gw);
    const key = await gw.createKey({ name: 'pg-workers', balance: 5 });
    const charged = await chatMany(gw, key.key, 80, 10);
    assert.deepEqual([...servingWorkers(gw)].sort(), [...pids].sort(), 'requests were served by both workers');
    assert.equal(await gw.stop('SIGTERM'), 0);
    for (const pid of pids) assert.ok(!alive(pid));
    const store = await openPostgresStore(schema.url, { maxConnections: 1 });
    try {
      const audit = await store.ledger.audit(key.id);
      assert.deepEqual(audit.cached, audit.derived);
      assert.equal(audit.activeHolds, 0);
      assert.equal(audit.cached.spent, charged);
      assert.equal(audit.cached.balance, usdToNano(5) - charged);
    } finally {
      await store.close();
    }
  });
});

describe('serve --workers: refused values', () => {
  test('a --workers that is not a count or auto is a one-line error, and nothing starts', async () => {
    for (const value of ['0', 'two', '-1', '1.5']) {
      const result = await runCli(['serve', '--workers', value, '--config', '/nonexistent/tollgate.yaml']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /--workers must be a number from 1 to 256 or auto/);
    }
  });

  test('--workers with sqlite::memory: (private to each process) is refused before any worker starts', async () => {
    const mock = await startMockUpstream();
    try {
      const result = await startGateway({ config: mockConfig(mock), database: 'sqlite::memory:', args: ['--workers', '2'] }).then(
        async (gw) => {
          await stopGateway(gw, 5_000);
          return 'started';
        },
        (error: Error) => error.message,
      );
      assert.match(result, /--workers needs a database the workers can share/);
    } finally {
      await mock.close();
    }
  });
});

// GET /metrics under `serve --workers 2`: whichever worker a scrape reaches, it answers for the whole
// gateway — requests served by both workers summed, the database-wide holds gauge taken once.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { mockConfig, startGateway, stopGateway, type GatewayProcess } from '../support/gateway-process.js';
import { stall, startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { parseExposition, sampleId, type Scrape } from '../support/prometheus.js';
import { sleep } from '../support/resilience.js';

/** One request on a connection of its own (no keep-alive), so the cluster spreads them over the workers. */
function fresh(gw: GatewayProcess, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${gw.origin}${path}`, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function scrapeFresh(gw: GatewayProcess): Promise<Scrape> {
  const res = await fresh(gw, 'GET', '/metrics');
  assert.equal(res.status, 200, res.text.slice(0, 300));
  return parseExposition(res.text);
}

const OK_200 = sampleId('tollgate_requests_total', { endpoint: 'chat_completions', model: 'gpt-test', provider: 'mock', status: '200' });

describe('GET /metrics with serve --workers 2', () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  before(async () => {
    mock = await startMockUpstream();
    gw = await startGateway({ config: mockConfig(mock), args: ['--workers', '2'] });
  });
  after(async () => {
    await mock?.close();
    if (gw) await stopGateway(gw, 15_000);
  });

  test('every scrape shows the requests of both workers, summed; the holds gauge is counted once', async () => {
    const key = await gw.createKey({ balance: 10 });
    const chat = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 20 });
    const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
    const REQUESTS = 20;
    for (let i = 0; i < REQUESTS; i++) assert.equal((await fresh(gw, 'POST', '/v1/chat/completions', headers, chat)).status, 200);

    // Both workers served some (their access lines name them).
    let servedBy = new Set<number>();
    for (let i = 0; i < 100; i++) {
      servedBy = new Set(gw.logs.map((l) => JSON.parse(l) as { msg?: string; worker?: number }).filter((l) => l.msg === 'request').map((l) => l.worker!));
      if ([...servedBy].length === 2 && gw.logs.filter((l) => l.includes('"msg":"request"')).length >= REQUESTS) break;
      await sleep(25);
    }
    assert.equal(servedBy.size, 2, 'both workers served requests');

    for (let i = 0; i < 6; i++) {
      const s = await scrapeFresh(gw);
      assert.equal(s.samples.get(OK_200), REQUESTS, `scrape ${i}: all ${REQUESTS} requests, whichever worker answered`);
      assert.equal(s.samples.get(sampleId('tollgate_request_duration_seconds_count', { model: 'gpt-test' })), REQUESTS);
    }

    // One request in flight: one hold in the database, so 1 — not one per worker.
    mock.handle(stall());
    const pending = fresh(gw, 'POST', '/v1/chat/completions', headers, chat).catch(() => undefined);
    let during: Scrape | undefined;
    for (let i = 0; i < 200; i++) {
      during = await scrapeFresh(gw);
      if (during.samples.get('tollgate_holds_active') === 1) break;
      await sleep(25);
    }
    assert.equal(during!.samples.get('tollgate_holds_active'), 1);
    for (let i = 0; i < 4; i++) assert.equal((await scrapeFresh(gw)).samples.get('tollgate_holds_active'), 1);
    await mock.close();
    await pending;
  });
});

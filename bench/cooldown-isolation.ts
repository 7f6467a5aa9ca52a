// A failing model next to a healthy one on the same provider account: what status codes does the client
// see over a window? Before cool-down per upstream (issue 8), model X's failures cooled the whole account
// and model Y answered 502 without being called. Run: node --import tsx bench/cooldown-isolation.ts [--seconds 60]
// (uses the compiled gateway: npm run build first). Prints one JSON summary.
import { parseArgs } from 'node:util';
import { mockConfig, startGateway, stopGateway } from '../test/support/gateway-process.js';
import { defaultReply, errorReply, startMockUpstream } from '../test/support/mock-upstream.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, 'every-ms': { type: 'string', default: '100' } } });
const seconds = Number(values.seconds);
const everyMs = Number(values['every-ms']);

const mock = await startMockUpstream();
// mockConfig's provider with the shipped cool-down defaults (3 failures, 30 s) instead of the tests' "off".
const config = mockConfig(mock).replace(/cooldown: \{[^}]*\}/, 'cooldown: { failures: 3, seconds: 30 }');
const gw = await startGateway({ config });
try {
  const key = await gw.createKey({ name: 'isolation', balance: 1000 });
  // gpt-test is served by upstream model gpt-4o-mini; gpt-locked by gpt-4o on the same provider: make gpt-4o fail.
  mock.handle((req) => (req.body?.model === 'gpt-4o' ? errorReply(529, 'Overloaded', { type: 'overloaded_error' }) : defaultReply(req)));
  const seen: Record<string, Record<string, number>> = { 'failing (gpt-locked)': {}, 'healthy (gpt-test)': {} };
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    // The failing model gets twice the traffic: its failures come in runs, as they do under real load.
    for (const [label, model] of [
      ['failing (gpt-locked)', 'gpt-locked'],
      ['failing (gpt-locked)', 'gpt-locked'],
      ['healthy (gpt-test)', 'gpt-test'],
    ] as const) {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] }),
      });
      await res.arrayBuffer();
      seen[label]![res.status] = (seen[label]![res.status] ?? 0) + 1;
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  const upstreamCalls = { 'gpt-4o (failing)': 0, 'gpt-4o-mini (healthy)': 0 };
  for (const r of mock.requests) {
    if (r.body?.model === 'gpt-4o') upstreamCalls['gpt-4o (failing)'] += 1;
    if (r.body?.model === 'gpt-4o-mini') upstreamCalls['gpt-4o-mini (healthy)'] += 1;
  }
  console.log(JSON.stringify({ seconds, statusesSeenByClient: seen, upstreamCalls }, null, 2));
} finally {
  await mock.close();
  await stopGateway(gw, 10_000);
}

// Runs the mock OpenAI-compatible upstream standalone, for benchmarks and the README quickstart.
// Usage: node --import tsx test/support/mock-upstream-cli.ts [--port 9099] [--host 127.0.0.1] [--no-record [--agents]]
// --agents (with --no-record): also answers POST /v1/messages and /v1/responses, precomputed (mock-agent-replies.ts).
import { parseArgs } from 'node:util';
import { agentReplies } from './mock-agent-replies.js';
import { startMockUpstream } from './mock-upstream.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '9099' },
    host: { type: 'string', default: '127.0.0.1' },
    // Standalone, nobody reads the recorded requests; benchmarks should pass this so memory stays flat.
    'no-record': { type: 'boolean', default: false },
    agents: { type: 'boolean', default: false },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`invalid --port: ${values.port}`);
  process.exit(2);
}

if (values.agents && !values['no-record']) {
  console.error('--agents needs --no-record (it answers on the unrecorded fast path)');
  process.exit(2);
}
const mock = await startMockUpstream({ port, host: values.host, record: !values['no-record'], ...(values.agents ? { alsoAnswer: agentReplies() } : {}) });
console.log(`mock upstream listening on ${mock.url}`);

function shutdown(): void {
  mock.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);

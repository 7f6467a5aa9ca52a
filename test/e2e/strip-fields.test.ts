// Credential and endpoint fields never reach an upstream (`providers.<id>.strip_fields`, the one
// exception to pass-through): an upstream that is itself a proxy honours `api_base` or `api_key` in a body.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertChatOk, call, costOf, extendConfig, postChat, sdk, streamChat } from '../support/e2e.js';
import { mockConfig, startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { ANTHROPIC_MOCK_KEY, startMockAnthropic, type MockAnthropic } from '../support/mock-anthropic.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { TEST_PRICES } from '../support/money.js';

const SMUGGLED = {
  api_key: 'sk-client-supplied',
  api_base: 'http://attacker.example',
  base_url: 'http://attacker.example/v1',
  azure_endpoint: 'https://attacker.openai.azure.com',
  extra_headers: { 'x-api-key': 'sk-client-supplied' },
  headers: { authorization: 'Bearer sk-client-supplied' },
  organization: 'org-attacker',
};
const STRIPPED = Object.keys(SMUGGLED);
const hello = [{ role: 'user', content: 'Hello' }];

function assertNothingSmuggled(body: Record<string, unknown>, rawBody: string): void {
  for (const field of STRIPPED) assert.ok(!(field in body), `${field} was not forwarded`);
  assert.doesNotMatch(rawBody, /attacker|sk-client-supplied|org-attacker/, 'no trace of the smuggled values upstream');
}

describe('strip_fields', () => {
  let mock: MockUpstream;
  let anthropic: MockAnthropic;
  let gw: GatewayProcess;
  let key: CreatedKey;

  before(async () => {
    [mock, anthropic] = await Promise.all([startMockUpstream(), startMockAnthropic()]);
    const config = extendConfig(mockConfig(mock), {
      providers: [
        // The same upstream with its own list: only `custom_secret` is stripped, so `organization` passes.
        'custom:',
        '  kind: openai-compatible',
        `  base_url: ${mock.url}`,
        '  strip_fields: [custom_secret]',
        'claude:',
        '  kind: anthropic',
        `  base_url: ${anthropic.url}`,
        `  api_key: ${ANTHROPIC_MOCK_KEY}`,
      ]
        .map((line) => `  ${line}`)
        .join('\n'),
      models: [
        'custom-test:',
        '  upstreams: [{ provider: custom, model: gpt-4o-mini }]',
        `  price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output} }`,
        '  max_output_tokens: 1000',
        'claude-test:',
        '  upstreams: [{ provider: claude, model: claude-sonnet-4-5 }]',
        `  price: { input: ${TEST_PRICES.input}, output: ${TEST_PRICES.output} }`,
        '  max_output_tokens: 1000',
      ]
        .map((line) => `  ${line}`)
        .join('\n'),
    });
    gw = await startGateway({ config });
    key = await gw.createKey({ name: 'strip', balance: 10 });
  });
  after(async () => {
    await Promise.all([mock?.close(), anthropic?.close()]);
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => {
    mock.reset();
    anthropic.reset();
  });

  test('a chat body carrying every default field reaches the upstream without them, everything else intact, and is billed as usual', async () => {
    const res = await postChat(gw, key.key, { model: 'gpt-test', messages: hello, temperature: 0.3, user: 'u-1', ...SMUGGLED });
    assertChatOk(res, 'gpt-test');
    assert.equal(mock.requests.length, 1);
    const upstream = mock.requests[0]!;
    assertNothingSmuggled(upstream.body, upstream.rawBody);
    assert.equal(upstream.body.temperature, 0.3, 'other fields are forwarded');
    assert.equal(upstream.body.user, 'u-1');
    assert.equal(upstream.headers.authorization, 'Bearer sk-mock-upstream-secret', "the gateway's own credentials are used");
    assert.equal(upstream.headers['x-api-key'], undefined);
  });

  test('streams and embeddings are stripped too', async () => {
    const stream = await streamChat(gw, key.key, { model: 'gpt-test', messages: hello, ...SMUGGLED });
    assert.ok(stream.chunks.length > 0);
    const embedding = await call(gw, 'POST', '/embeddings', { key: key.key, body: { model: 'embed-test', input: 'hi', ...SMUGGLED } });
    assert.equal(embedding.status, 200, embedding.text);
    costOf(embedding.json.usage);
    assert.equal(mock.requests.length, 2);
    for (const upstream of mock.requests) assertNothingSmuggled(upstream.body, upstream.rawBody);
  });

  test('the real openai SDK sending them as extra body fields gets its answer; the upstream never sees them', async () => {
    const client = sdk(gw, key.key);
    const reply = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hello' }], ...SMUGGLED } as never);
    assert.ok((reply as { choices: unknown[] }).choices.length > 0);
    assertNothingSmuggled(mock.requests[0]!.body, mock.requests[0]!.rawBody);
  });

  test('an Anthropic upstream (native fields otherwise forwarded) never sees them either', async () => {
    const res = await postChat(gw, key.key, { model: 'claude-test', messages: hello, top_k: 5, ...SMUGGLED });
    assertChatOk(res, 'claude-test');
    assert.equal(anthropic.requests.length, 1);
    const upstream = anthropic.requests[0]!;
    assertNothingSmuggled(upstream.body, upstream.rawBody);
    assert.equal(upstream.body.top_k, 5, 'a native field is still forwarded');
    assert.equal(upstream.headers['x-api-key'], ANTHROPIC_MOCK_KEY);
  });

  test('a provider with its own strip_fields strips exactly that list', async () => {
    const res = await postChat(gw, key.key, { model: 'custom-test', messages: hello, custom_secret: 's3cret', organization: 'org-1' });
    assertChatOk(res, 'custom-test');
    const upstream = mock.requests[0]!;
    assert.ok(!('custom_secret' in upstream.body), 'custom_secret was stripped');
    assert.equal(upstream.body.organization, 'org-1', 'a field the list does not name is forwarded');
  });
});

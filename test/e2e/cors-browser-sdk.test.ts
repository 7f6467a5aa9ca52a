// A browser app with the official openai SDK (dangerouslyAllowBrowser), in a real headless Chromium, on a
// page whose origin is listed in server.cors_origins (served from another port than the gateway's): its
// chat completions — plain and streamed, with Tollgate's own headers — pass the CORS preflight the SDK's
// X-Stainless-* headers trigger, and the page can read the response headers an app needs. A page on an
// origin that is not listed gets no CORS allowance: the SDK fails to connect and nothing reaches the
// upstream.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { extendConfig } from '../support/e2e.js';
import { chromiumSkipReason, launchChromium, watchPage, type WatchedPage } from '../support/browser.js';
import { mockConfig, startGateway, stopGateway, type CreatedKey, type GatewayProcess } from '../support/gateway-process.js';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.js';
import { bundleSdkPage, startSdkPage, type SdkChatOptions, type SdkChatResult, type SdkPageServer } from '../support/sdk-page.js';

const skip = chromiumSkipReason();

describe('the openai SDK in a browser, from an allowed origin and from another', { skip }, () => {
  let mock: MockUpstream;
  let gw: GatewayProcess;
  let browser: Browser;
  let allowedPage: SdkPageServer;
  let otherPage: SdkPageServer;
  let key: CreatedKey;

  before(async () => {
    const script = await bundleSdkPage();
    allowedPage = await startSdkPage(script);
    otherPage = await startSdkPage(script);
    mock = await startMockUpstream();
    gw = await startGateway({ config: extendConfig(mockConfig(mock), { server: `  cors_origins: ["${allowedPage.origin}"]` }) });
    key = await gw.createKey({ name: 'browser-app', balance: 5 });
    const limits = await gw.cli(['keys', 'set-limits', key.id, '--rpm', '600']);
    assert.equal(limits.code, 0, limits.stderr);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await allowedPage?.close();
    await otherPage?.close();
    await mock?.close();
    if (gw) await stopGateway(gw, 10_000);
  });
  beforeEach(() => mock.reset());

  /** Opens the SDK page of `site` in a fresh, watched browser page. */
  async function openPage(site: SdkPageServer, label: string): Promise<WatchedPage> {
    const watched = await watchPage(browser, label);
    await watched.page.goto(`${site.origin}/`);
    await watched.page.waitForFunction("'tollgateSdk' in window");
    return watched;
  }

  function chatInPage(watched: WatchedPage, options: SdkChatOptions): Promise<SdkChatResult> {
    return watched.page.evaluate(
      (opts) => (globalThis as unknown as { tollgateSdk: { chat(o: SdkChatOptions): Promise<SdkChatResult> } }).tollgateSdk.chat(opts),
      options,
    );
  }

  const READ = ['x-request-id', 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-tollgate-max-tokens-clamped'];

  test('a chat completion from the allowed origin succeeds, and the page reads x-request-id and the rate-limit headers', async () => {
    const watched = await openPage(allowedPage, 'cors-sdk-chat');
    const result = await chatInPage(watched, { baseURL: gw.baseURL, apiKey: key.key, stream: false, read: READ });
    assert.ok(result.ok, `the SDK call succeeded: ${JSON.stringify(result)}`);
    assert.equal(result.model, 'gpt-test');
    assert.ok(result.content.length > 0);
    assert.match(result.headers['x-request-id'] ?? '', /^req_/, 'x-request-id is readable');
    assert.equal(result.headers['x-ratelimit-limit-requests'], '600', 'the rate-limit headers are readable');
    assert.equal(mock.requests.length, 1, 'the call reached the upstream once');
    // The SDK really sent its platform headers (they are what needs the preflight).
    const sent = watched.requests().find((r) => r.url === `${gw.baseURL}/chat/completions`);
    assert.ok(sent && Object.keys(sent.headers).some((name) => name.startsWith('x-stainless-')), 'the SDK sent X-Stainless-* headers');
    watched.assertClean();
  });

  test('a streamed chat completion from the allowed origin arrives chunk by chunk', async () => {
    const watched = await openPage(allowedPage, 'cors-sdk-stream');
    const result = await chatInPage(watched, { baseURL: gw.baseURL, apiKey: key.key, stream: true, read: READ });
    assert.ok(result.ok, `the SDK stream succeeded: ${JSON.stringify(result)}`);
    assert.equal(result.model, 'gpt-test');
    assert.ok(result.chunks > 1, `several chunks (${result.chunks})`);
    assert.ok(result.content.length > 0);
    assert.match(result.headers['x-request-id'] ?? '', /^req_/);
    assert.equal(mock.requests.length, 1);
    watched.assertClean();
  });

  test('X-Tollgate-Max-Tokens and Idempotency-Key pass the preflight, and the page reads x-tollgate-max-tokens-clamped', async () => {
    const poor = await gw.createKey({ name: 'browser-poor', balance: '0.0005' });
    const watched = await openPage(allowedPage, 'cors-sdk-clamp');
    const result = await chatInPage(watched, {
      baseURL: gw.baseURL,
      apiKey: poor.key,
      stream: false,
      maxTokens: 1000,
      headers: { 'X-Tollgate-Max-Tokens': 'clamp', 'Idempotency-Key': 'browser-clamp-1' },
      read: READ,
    });
    assert.ok(result.ok, `the clamped call succeeded: ${JSON.stringify(result)}`);
    const clamped = Number(result.headers['x-tollgate-max-tokens-clamped']);
    assert.ok(clamped >= 1 && clamped < 1000, `x-tollgate-max-tokens-clamped is readable: ${result.headers['x-tollgate-max-tokens-clamped']}`);
    assert.equal(mock.requests[0]?.body.max_tokens, clamped, 'the upstream saw the clamped max_tokens');
    watched.assertClean();
  });

  test('a call from the allowed origin with a header outside the allowed names and prefixes is refused by the browser', async () => {
    const watched = await openPage(allowedPage, 'cors-sdk-header');
    const result = await chatInPage(watched, { baseURL: gw.baseURL, apiKey: key.key, stream: false, headers: { 'X-Custom-Trace': '1' } });
    assert.equal(result.ok === false && result.error, 'APIConnectionError', JSON.stringify(result));
    assert.equal(mock.requests.length, 0, 'no upstream call');
    assert.ok(
      watched.problems().some((problem) => /x-custom-trace is not allowed/i.test(problem)),
      `the browser names the header: ${watched.problems().join(' | ')}`,
    );
  });

  test('a page on an origin that is not listed gets no CORS allowance: the SDK cannot connect and nothing reaches the upstream', async () => {
    const watched = await openPage(otherPage, 'cors-sdk-other');
    for (const stream of [false, true]) {
      const result = await chatInPage(watched, { baseURL: gw.baseURL, apiKey: key.key, stream });
      assert.equal(result.ok, false, `the call is refused (stream: ${stream})`);
      assert.equal(result.ok === false && result.error, 'APIConnectionError');
    }
    assert.equal(mock.requests.length, 0, 'no upstream call');
    assert.ok(
      watched.problems().some((problem) => /CORS policy/.test(problem)),
      `the browser blamed CORS: ${watched.problems().join(' | ')}`,
    );
  });
});

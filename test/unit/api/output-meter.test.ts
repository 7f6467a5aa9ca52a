// Counts the output a client actually received, for settling without upstream usage.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { countText } from '../../../src/tokens/count-text.js';
import { COUNT_BUDGET_MS, TokenTally } from '../../../src/tokens/token-tally.js';
import { OutputMeter } from '../../../src/api/openai-chat/output-meter.js';

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  return { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] };
}

describe('OutputMeter', () => {
  test('counts content, reasoning and tool calls received in chunks', () => {
    const meter = new OutputMeter();
    meter.observeChunk(chunk({ role: 'assistant', content: '' }));
    assert.equal(meter.sawOutput, false);
    meter.observeChunk(chunk({ reasoning_content: 'Think about Paris.' }));
    meter.observeChunk(chunk({ content: 'The capital ' }));
    meter.observeChunk(chunk({ content: 'is Paris.' }));
    meter.observeChunk(chunk({ tool_calls: [{ index: 0, function: { name: 'lookup', arguments: '{"q":"x"}' } }] }));
    assert.equal(meter.sawOutput, true);
    assert.equal(meter.sawFinish, false);
    assert.equal(meter.tokens(), countText('Think about Paris.The capital is Paris.lookup{"q":"x"}'));
  });

  test('notes a finish_reason', () => {
    const meter = new OutputMeter();
    meter.observeChunk(chunk({}, 'stop'));
    assert.equal(meter.sawFinish, true);
    assert.equal(meter.sawOutput, false);
    assert.equal(meter.tokens(), 0);
  });

  test('counts a non-stream completion', () => {
    const meter = new OutputMeter();
    meter.observeCompletion({ choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there', refusal: null } }] });
    assert.equal(meter.tokens(), countText('Hello there'));
  });

  test('counts a long stream, as it arrives, exactly as the tokenizer counts its joined text', () => {
    const words = 'The meter counts what the client received, ' + 'with reasoning, code `x = f(y)` and 数字 123. ';
    // A clock that never advances: exactness is under test here, not the time budget (a loaded machine
    // spent the real 50 ms before the end and the rest was estimated; token-tally's tests cover the budget).
    const meter = new OutputMeter(new TokenTally(COUNT_BUDGET_MS, () => 0));
    const deltas: string[] = [];
    for (let i = 0; i < 3_000; i++) {
      const delta = `${words.slice(0, 5 + (i % 40))}${i} `;
      deltas.push(delta);
      meter.observeChunk(chunk(i % 3 === 0 ? { reasoning_content: delta } : { content: delta }));
    }
    assert.equal(meter.tokens(), countText(deltas.join('')));
  });
});


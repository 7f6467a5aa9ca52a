// Anthropic Messages SSE → chat.completion.chunks, one chunk at most per event. Anthropic streams typed
// content blocks (text, thinking, tool_use) by block index; the client sees content, reasoning_content,
// thinking_blocks (once a thinking block is complete, with its signature) and tool calls indexed 0, 1, ...
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { SseEvent } from '../framing/sse.js';
import { ChunkBuilder } from '../chunk-builder.js';
import { parseStreamEvent, UpstreamFailureError, type ChatRequestBody, type ChatStreamTranslator, type ReportedUsage, type UpstreamTarget } from '../types.js';
import { readAnthropicErrorObject, statusForErrorType } from './errors.js';
import { mapStopReason, thinkingBlock } from './response.js';
import { JSON_RESPONSE_TOOL } from './tools.js';
import { mergeUsageCounts, noteServedModel, reportAnthropicUsage, type AnthropicUsageCounts } from './usage.js';

type Block =
  | { kind: 'text' }
  | { kind: 'thinking'; text: string; signature: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; index: number; args: string }
  | { kind: 'json'; args: string }
  | { kind: 'other' };

export class AnthropicChatStreamTranslator implements ChatStreamTranslator {
  finished = false;
  private readonly chunks: ChunkBuilder;
  private readonly blocks = new Map<number, Block>();
  private readonly counts: AnthropicUsageCounts = {};
  private thinkingText = '';
  private toolCalls = 0;
  /** Usage counts only once message_delta has reported the final output count (see `usage`). */
  private sawFinalUsage = false;
  private reported: ReportedUsage | null = null;
  /**
   * JSON mode: the reply is the json_response tool's input. When thinking is on the tool cannot be
   * forced, and Claude may write a sentence first; text is held back until it is clear whether the
   * tool is called (then the text is dropped, as in a non-stream reply) or not (then it is the reply).
   */
  private readonly jsonMode: boolean;
  private heldText = '';
  private sawJsonResponse = false;

  constructor(target: UpstreamTarget, body?: ChatRequestBody) {
    this.chunks = new ChunkBuilder(target.clientModel);
    const format = isJsonObject(body?.response_format) ? body.response_format.type : undefined;
    this.jsonMode = format === 'json_object' || format === 'json_schema';
  }

  /** Text for the client, or held back in JSON mode. */
  private text(text: string): JsonObject | null {
    if (!this.jsonMode) return this.chunks.chunk({ content: text });
    if (!this.sawJsonResponse) this.heldText += text;
    return null;
  }

  get id(): string {
    return this.chunks.id;
  }

  get created(): number {
    return this.chunks.created;
  }

  /**
   * Null until message_delta arrives: message_start's output count is a placeholder (1 or 2 tokens), and
   * a stream cut before the end is better settled on the tokenizer count of what was delivered.
   */
  get usage(): ReportedUsage | null {
    if (!this.sawFinalUsage) return null;
    this.reported ??= reportAnthropicUsage(this.counts, this.thinkingText);
    return this.reported;
  }

  onEvent(event: SseEvent): JsonObject | null {
    const payload = parseStreamEvent(event);
    // The data's `type` repeats the `event:` name; it is read from the data, which every frame carries.
    switch (payload.type) {
      case 'message_start':
        return this.onMessageStart(payload.message);
      case 'content_block_start':
        return this.onBlockStart(payload.index, payload.content_block);
      case 'content_block_delta':
        return this.onBlockDelta(payload.index, payload.delta);
      case 'content_block_stop':
        return this.onBlockStop(payload.index);
      case 'message_delta':
        return this.onMessageDelta(payload);
      case 'message_stop':
        this.finished = true;
        return null;
      case 'error': {
        const error = isJsonObject(payload.error) ? payload.error : {};
        throw new UpstreamFailureError(readAnthropicErrorObject(error, statusForErrorType(error.type)));
      }
      default:
        return null; // ping, and event types Anthropic may add
    }
  }

  private onMessageStart(message: unknown): JsonObject {
    if (isJsonObject(message)) {
      if (typeof message.id === 'string') this.chunks.id = message.id;
      mergeUsageCounts(this.counts, message.usage);
      noteServedModel(this.counts, message.model);
    }
    return this.chunks.chunk({ role: 'assistant', content: '' });
  }

  private onBlockStart(index: unknown, block: unknown): JsonObject | null {
    if (typeof index !== 'number' || !isJsonObject(block)) return null;
    switch (block.type) {
      case 'text':
        this.blocks.set(index, { kind: 'text' });
        return typeof block.text === 'string' && block.text !== '' ? this.text(block.text) : null;
      case 'thinking': {
        const text = typeof block.thinking === 'string' ? block.thinking : '';
        this.blocks.set(index, { kind: 'thinking', text, signature: typeof block.signature === 'string' ? block.signature : '' });
        this.thinkingText += text;
        return text !== '' ? this.chunks.chunk({ reasoning_content: text }) : null;
      }
      case 'redacted_thinking':
        this.blocks.set(index, { kind: 'redacted', data: typeof block.data === 'string' ? block.data : '' });
        return null;
      case 'tool_use':
        return this.onToolStart(index, block);
      default:
        this.blocks.set(index, { kind: 'other' });
        return null;
    }
  }

  private onToolStart(index: number, block: JsonObject): JsonObject | null {
    // The input normally streams as input_json_delta; a non-empty one at the start is taken as given.
    const args = isJsonObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    if (block.name === JSON_RESPONSE_TOOL) {
      this.sawJsonResponse = true;
      this.heldText = '';
      this.blocks.set(index, { kind: 'json', args });
      return args !== '' ? this.chunks.chunk({ content: args }) : null;
    }
    const toolIndex = this.toolCalls++;
    this.blocks.set(index, { kind: 'tool', index: toolIndex, args });
    const call = { index: toolIndex, id: block.id, type: 'function', function: { name: block.name, arguments: args } };
    return this.chunks.chunk({ tool_calls: [call] });
  }

  private onBlockDelta(index: unknown, delta: unknown): JsonObject | null {
    const block = typeof index === 'number' ? this.blocks.get(index) : undefined;
    if (!block || !isJsonObject(delta)) return null;
    if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') {
      return this.text(delta.text);
    }
    if (delta.type === 'thinking_delta' && block.kind === 'thinking' && typeof delta.thinking === 'string' && delta.thinking !== '') {
      block.text += delta.thinking;
      this.thinkingText += delta.thinking;
      return this.chunks.chunk({ reasoning_content: delta.thinking });
    }
    if (delta.type === 'signature_delta' && block.kind === 'thinking' && typeof delta.signature === 'string') {
      block.signature += delta.signature;
      return null;
    }
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
      if (block.kind === 'json') {
        block.args += delta.partial_json;
        return this.chunks.chunk({ content: delta.partial_json });
      }
      if (block.kind === 'tool') {
        block.args += delta.partial_json;
        return this.chunks.chunk({ tool_calls: [{ index: block.index, function: { arguments: delta.partial_json } }] });
      }
    }
    return null; // empty fragments, citations_delta, deltas of server-tool blocks
  }

  private onBlockStop(index: unknown): JsonObject | null {
    const block = typeof index === 'number' ? this.blocks.get(index) : undefined;
    switch (block?.kind) {
      case 'thinking':
        return this.chunks.chunk({ thinking_blocks: [thinkingBlock(block.text, block.signature)] });
      case 'redacted':
        return this.chunks.chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: block.data }] });
      // A tool called without input streams no JSON at all; clients parse the assembled arguments, and
      // '' is not JSON, so the call gets '{}' (what the non-stream reply says too).
      case 'tool':
        return block.args === '' ? this.chunks.chunk({ tool_calls: [{ index: block.index, function: { arguments: '{}' } }] }) : null;
      case 'json':
        return block.args === '' ? this.chunks.chunk({ content: '{}' }) : null;
      default:
        return null;
    }
  }

  private onMessageDelta(payload: JsonObject): JsonObject | null {
    mergeUsageCounts(this.counts, payload.usage);
    this.sawFinalUsage = true;
    this.reported = null;
    const stopReason = isJsonObject(payload.delta) ? payload.delta.stop_reason : undefined;
    // JSON mode without a json_response call: the held-back text is the reply after all.
    const delta = this.heldText ? { content: this.heldText } : {};
    this.heldText = '';
    if (typeof stopReason !== 'string') return Object.keys(delta).length > 0 ? this.chunks.chunk(delta) : null;
    return this.chunks.chunk(delta, mapStopReason(stopReason, this.toolCalls > 0));
  }
}

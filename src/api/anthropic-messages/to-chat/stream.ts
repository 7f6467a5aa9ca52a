// One streamed attempt of a translated cell: the upstream's chat chunks, read by the candidate's own chat
// stream translator (usage wherever it comes, reasoning renamed, tool calls indexed densely, Azure's
// annotations gone), written as a Messages stream that the Anthropic SDK accumulates:
//   message_start (the hold's input estimate, output 1) → content blocks, indexes from 0, one open at a
//   time: thinking (thinking_delta…, then the gateway's mark as signature_delta), text (text_delta…), one
//   tool_use per call → after the settlement, one message_delta (stop reason, the exact cumulative usage
//   and its cost) → message_stop. Every frame carries its `event:` line; `ping` fills 15 s of silence.
// Tool calls are gathered and sent whole when the upstream finishes (its finish_reason, else its end), one
// block each — start, one input_json_delta, stop — in the order of their indexes: fragments a server
// interleaves (parallel calls, text between a call's name and its arguments) still come out whole, and
// arguments that are not a JSON object become `{}` rather than text the SDK's partial-JSON parser throws on.
// A call counts as output as soon as its name arrives: the stream commits (message_start goes out, pings
// keep the connection alive) while a slow model writes a long argument, metered as it comes. A cut or
// failed stream ends as a native one does.
import type { GatewayError } from '../../../errors.js';
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import type { Charge } from '../../../pipeline/admission/reservation.js';
import type { ClientStream } from '../../../pipeline/client-api.js';
import type { ChatStreamTranslator, FramedEvent, ReportedUsage } from '../../../providers/types.js';
import { COUNT_BUDGET_MS, TokenTally } from '../../../tokens/token-tally.js';
import { messagesErrorBody } from '../envelope.js';
import { sseEvent } from '../stream.js';
import { ThinkingMark } from '../thinking.js';
import { anthropicCounts, usageWithCost } from '../usage.js';
import { messageIdOf } from './answer.js';
import { stopReasonOf } from './stop-reason.js';
import { messagesToolUseId } from './tool-ids.js';
import { toolInputJson } from './tool-input.js';

/** Anthropic's own streams ping about this often; a translated upstream may say nothing for minutes. */
export const PING_AFTER_MS = 15_000;
const PING = sseEvent('ping', '{"type":"ping"}');
const MESSAGE_STOP = sseEvent('message_stop', '{"type":"message_stop"}');

/** A tool call as its fragments arrive. */
interface ToolCall {
  id: unknown;
  name: string;
  args: string;
}

type OpenBlock = { readonly index: number; readonly kind: 'text' } | { readonly index: number; readonly kind: 'thinking'; readonly mark: ThinkingMark };

const frame = (payload: JsonObject): string => sseEvent(String(payload.type), JSON.stringify(payload));

export class ChatMessagesStream implements ClientStream {
  readonly keepAlive = { afterMs: PING_AFTER_MS, frame: PING };
  sawOutput = false;
  sawFinish = false;
  private readonly output: TokenTally;
  private started = false;
  /** message_start as sent, until the client has it (a cut of a stream it never saw begin starts with it). */
  private undeliveredStart: string | undefined;
  private messageId = '';
  private nextIndex = 0;
  private open: OpenBlock | undefined;
  /** The block the client saw open when a growing hold last covered the stream (a cut closes it). */
  private deliveredOpen: number | undefined;
  /** Tool calls by their (dense) chat index, gathered until the upstream finishes. */
  private readonly calls = new Map<number, ToolCall>();
  private madeToolCalls = false;
  private refused = false;
  private finish: unknown;
  private matched: unknown;

  /**
   * `inputTokens`: the hold's input estimate, announced in message_start (the upstream reports its count
   * only at the end); `stops`: the request's stop_sequences.
   */
  constructor(
    private readonly translator: ChatStreamTranslator,
    private readonly clientModel: string,
    private readonly requestId: string,
    private readonly inputTokens: number,
    private readonly stops: readonly unknown[],
    tally: TokenTally = new TokenTally(COUNT_BUDGET_MS),
  ) {
    this.output = tally;
  }

  get finished(): boolean {
    return this.translator.finished;
  }

  get usage(): ReportedUsage | null {
    return this.translator.usage;
  }

  push(event: FramedEvent): string {
    const chunk = this.translator.onEvent(event);
    if (!chunk || !Array.isArray(chunk.choices)) return '';
    let frames = this.started ? '' : this.start();
    // One choice: a Messages request has no `n`.
    const choice = chunk.choices.find((c) => isJsonObject(c) && (c.index ?? 0) === 0);
    if (!isJsonObject(choice)) return frames;
    const delta = isJsonObject(choice.delta) ? choice.delta : {};
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') frames += this.thinking(delta.reasoning_content);
    if (typeof delta.content === 'string' && delta.content !== '') frames += this.text(delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      this.refused = true;
      frames += this.text(delta.refusal);
    }
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) this.gather(call);
    if (choice.stop_reason !== undefined && choice.stop_reason !== null) this.matched = choice.stop_reason;
    if (typeof choice.finish_reason === 'string') {
      this.finish = choice.finish_reason;
      this.sawFinish = true;
      frames += this.closeAll();
    }
    return frames;
  }

  /** Tokenizer count of the output framed so far (what an estimate charges when no usage came). */
  delivered(): number {
    const tokens = this.output.total();
    // Bytes of output went out: never an estimate of nothing.
    return this.sawOutput ? Math.max(tokens, 1) : tokens;
  }

  final(charge: Charge): string {
    let frames = (this.started ? '' : this.start()) + this.closeAll();
    const stop = stopReasonOf({ finish: this.finish, toolCalls: this.madeToolCalls, refused: this.refused, matched: this.matched, stops: this.stops });
    const usage = this.translator.usage;
    frames += frame({ type: 'message_delta', delta: stop, usage: usageWithCost(usage ? anthropicCounts(usage.tokens) : undefined, charge) });
    return frames + MESSAGE_STOP;
  }

  markDelivered(): void {
    this.deliveredOpen = this.open?.index;
    this.undeliveredStart = undefined;
  }

  /** A growing hold could not grow: the block the client saw open closes, and the message ends as a max_tokens stop would. */
  cut(charge: Charge): string {
    let frames = this.undeliveredStart ?? (this.started ? '' : this.start());
    if (this.deliveredOpen !== undefined) frames += frame({ type: 'content_block_stop', index: this.deliveredOpen });
    frames += frame({ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: usageWithCost(undefined, charge) });
    return frames + MESSAGE_STOP;
  }

  error(error: GatewayError): string {
    return sseEvent('error', JSON.stringify(messagesErrorBody(error, this.requestId)));
  }

  private start(): string {
    this.started = true;
    this.messageId = messageIdOf(this.translator.id || this.requestId);
    const usage = { input_tokens: this.inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
    const message = { id: this.messageId, type: 'message', role: 'assistant', model: this.clientModel, content: [], stop_reason: null, stop_sequence: null, usage };
    this.undeliveredStart = frame({ type: 'message_start', message });
    return this.undeliveredStart;
  }

  private thinking(text: string): string {
    let frames = '';
    if (this.open?.kind !== 'thinking') {
      frames += this.closeOpen();
      const block = { index: this.nextIndex++, kind: 'thinking' as const, mark: new ThinkingMark() };
      this.open = block;
      frames += frame({ type: 'content_block_start', index: block.index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    }
    const open = this.open as Extract<OpenBlock, { kind: 'thinking' }>;
    open.mark.update(text);
    this.meter(text);
    return frames + frame({ type: 'content_block_delta', index: open.index, delta: { type: 'thinking_delta', thinking: text } });
  }

  private text(text: string): string {
    let frames = '';
    if (this.open?.kind !== 'text') {
      frames += this.closeOpen();
      this.open = { index: this.nextIndex++, kind: 'text' };
      frames += frame({ type: 'content_block_start', index: this.open.index, content_block: { type: 'text', text: '' } });
    }
    this.meter(text);
    return frames + frame({ type: 'content_block_delta', index: this.open.index, delta: { type: 'text_delta', text } });
  }

  /**
   * One tool-call fragment, gathered. Its name and arguments are metered as they arrive — output the
   * upstream made, which a growing hold must cover as it grows, not all at once when the call is sent.
   */
  private gather(fragment: unknown): void {
    if (!isJsonObject(fragment) || typeof fragment.index !== 'number') return;
    let call = this.calls.get(fragment.index);
    if (!call) this.calls.set(fragment.index, (call = { id: undefined, name: '', args: '' }));
    if (typeof fragment.id === 'string' && fragment.id !== '' && call.id === undefined) call.id = fragment.id;
    const fn = isJsonObject(fragment.function) ? fragment.function : {};
    if (typeof fn.name === 'string' && fn.name !== '' && call.name === '') {
      call.name = fn.name;
      this.meter(fn.name);
    }
    const args = typeof fn.arguments === 'string' ? fn.arguments : isJsonObject(fn.arguments) ? JSON.stringify(fn.arguments) : '';
    call.args += args;
    this.meter(args);
  }

  /** Ends the open block (a thinking block with its mark). */
  private closeOpen(): string {
    const open = this.open;
    if (!open) return '';
    this.open = undefined;
    const mark = open.kind === 'thinking' ? frame({ type: 'content_block_delta', index: open.index, delta: { type: 'signature_delta', signature: open.mark.signature() } }) : '';
    return mark + frame({ type: 'content_block_stop', index: open.index });
  }

  /** Closes the open block, then sends every gathered tool call whole, in index order: the upstream has finished. */
  private closeAll(): string {
    let frames = this.closeOpen();
    for (const chatIndex of [...this.calls.keys()].sort((a, b) => a - b)) {
      const call = this.calls.get(chatIndex)!;
      const index = this.nextIndex++;
      const id = messagesToolUseId(call.id, `${this.messageId}:${chatIndex}`);
      const input = toolInputJson(call.args);
      this.madeToolCalls = true;
      frames +=
        frame({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: call.name, input: {} } }) +
        frame({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: input } }) +
        frame({ type: 'content_block_stop', index });
    }
    this.calls.clear();
    return frames;
  }

  private meter(text: string): void {
    if (text.length === 0) return;
    this.output.push(text);
    this.sawOutput = true;
  }
}

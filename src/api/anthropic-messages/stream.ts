// One streamed Messages attempt on a native cell: every upstream event goes to the client as it came —
// its `event:` line and its data bytes unchanged — while the gateway reads along: usage from message_start
// and message_delta (the last report wins), the output delivered (text, tool input and thinking deltas,
// for an estimate when no final usage arrives). The final message_delta and message_stop are held back
// until the request is settled; then that one message_delta is re-encoded with `usage.cost` added.
import type { TokenUsage } from '../../billing/pricing.js';
import type { GatewayError } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { Charge } from '../../pipeline/admission/reservation.js';
import type { ClientStream } from '../../pipeline/client-api.js';
import { readAnthropicErrorObject, statusForErrorType } from '../../providers/anthropic/errors.js';
import { malformed, parseStreamEvent, UpstreamFailureError, type FramedEvent, type ReportedUsage } from '../../providers/types.js';
import { COUNT_BUDGET_MS, TokenTally } from '../../tokens/token-tally.js';
import { messagesErrorBody, verbatimBody } from './envelope.js';
import { UsageCounts, usageWithCost } from './usage.js';

/** One SSE event with its name; data with line breaks (never Anthropic's JSON) becomes several data lines. */
export function sseEvent(name: string, data: string): string {
  return data.includes('\n') ? `event: ${name}\n${data.split('\n').map((line) => `data: ${line}`).join('\n')}\n\n` : `event: ${name}\ndata: ${data}\n\n`;
}

const MESSAGE_STOP = sseEvent('message_stop', '{"type":"message_stop"}');

/** Output a block brings with its start (a tool's name; text already in a text or thinking block). */
function startOutput(block: JsonObject): string | undefined {
  if (block.type === 'tool_use' || block.type === 'server_tool_use') return typeof block.name === 'string' ? block.name : undefined;
  if (block.type === 'text') return typeof block.text === 'string' ? block.text : undefined;
  if (block.type === 'thinking') return typeof block.thinking === 'string' ? block.thinking : undefined;
  if (block.type === 'redacted_thinking') return typeof block.data === 'string' ? block.data : undefined;
  return undefined;
}

export class MessagesClientStream implements ClientStream {
  finished = false;
  sawOutput = false;
  sawFinish = false;
  private readonly counts = new UsageCounts();
  private readonly output: TokenTally;
  private readonly thinking: TokenTally;
  private sawFinalUsage = false;
  private reported: ReportedUsage | null | undefined;
  /** The last message_delta, held back for the settlement's cost (its payload and event name). */
  private heldDelta: { readonly payload: JsonObject; readonly name: string } | undefined;
  /** message_stop as the upstream sent it, held back behind the message_delta. */
  private heldStop: string | undefined;
  /** Content blocks started and not yet stopped, as read from the upstream... */
  private readonly openBlocks = new Set<number>();
  /** ...and as the client saw them when a growing hold last covered the stream (a cut closes these). */
  private deliveredOpenBlocks: ReadonlySet<number> = new Set();
  /** message_start as sent, until the client has it (a cut of a stream it never saw begin starts with it). */
  private undeliveredStart: string | undefined;

  /** `askedOneHour`: whether the request asked for 1-hour cache writes (read only when usage leaves it open). */
  constructor(
    private readonly requestId: string,
    private readonly askedOneHour: () => boolean,
    tally: () => TokenTally = () => new TokenTally(COUNT_BUDGET_MS),
  ) {
    this.output = tally();
    this.thinking = tally();
  }

  push(event: FramedEvent): string {
    const payload = parseStreamEvent(event);
    const name = event.event ?? (typeof payload.type === 'string' ? payload.type : 'message');
    switch (payload.type) {
      case 'message_start':
        if (!isJsonObject(payload.message)) throw malformed('message_start');
        this.counts.merge(payload.message.usage);
        this.undeliveredStart = sseEvent(name, event.data);
        break;
      case 'content_block_start':
        if (typeof payload.index === 'number') this.openBlocks.add(payload.index);
        if (isJsonObject(payload.content_block)) this.meter(startOutput(payload.content_block), payload.content_block.type === 'thinking');
        break;
      case 'content_block_delta':
        this.onDelta(payload.delta);
        break;
      case 'content_block_stop':
        if (typeof payload.index === 'number') this.openBlocks.delete(payload.index);
        break;
      case 'message_delta': {
        this.counts.merge(payload.usage);
        this.sawFinalUsage = true;
        this.reported = undefined;
        if (isJsonObject(payload.delta) && typeof payload.delta.stop_reason === 'string') this.sawFinish = true;
        // A second message_delta (none is expected) releases the one held before it.
        const earlier = this.heldDelta;
        this.heldDelta = { payload, name };
        return earlier ? sseEvent(earlier.name, JSON.stringify(earlier.payload)) : '';
      }
      case 'message_stop':
        this.finished = true;
        this.heldStop = sseEvent(name, event.data);
        return '';
      case 'error': {
        const error = isJsonObject(payload.error) ? payload.error : {};
        // Kept as sent: the client speaks Messages, and may read the upstream's own wording.
        throw new UpstreamFailureError({ ...readAnthropicErrorObject(error, statusForErrorType(error.type)), body: event.data });
      }
      default:
        break;
    }
    return sseEvent(name, event.data);
  }

  private onDelta(delta: unknown): void {
    if (!isJsonObject(delta)) return;
    if (delta.type === 'text_delta') this.meter(delta.text, false);
    else if (delta.type === 'thinking_delta') this.meter(delta.thinking, true);
    else if (delta.type === 'input_json_delta') this.meter(delta.partial_json, false);
  }

  private meter(text: unknown, thinking: boolean): void {
    if (typeof text !== 'string' || text.length === 0) return;
    this.output.push(text);
    if (thinking) this.thinking.push(text);
    this.sawOutput = true;
  }

  /** Null until message_delta reported the final output count (message_start's is a placeholder). */
  get usage(): ReportedUsage | null {
    if (!this.sawFinalUsage) return null;
    if (this.reported === undefined) this.reported = this.counts.report(this.thinking.total(), this.askedOneHour);
    return this.reported;
  }

  /** message_start's input counts, exact: a stream settled on an estimate charges them. */
  get knownInput(): TokenUsage | null {
    return this.counts.input();
  }

  delivered(): number {
    const tokens = this.output.total();
    // Bytes of output went out: never an estimate of nothing.
    return this.sawOutput ? Math.max(tokens, 1) : tokens;
  }

  final(charge: Charge): string {
    const held = this.heldDelta ?? { payload: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: {} }, name: 'message_delta' };
    const payload = { ...held.payload, usage: usageWithCost(held.payload.usage, charge) };
    return sseEvent(held.name, JSON.stringify(payload)) + (this.heldStop ?? MESSAGE_STOP);
  }

  markDelivered(): void {
    this.deliveredOpenBlocks = new Set(this.openBlocks);
    this.undeliveredStart = undefined;
  }

  /** A growing hold could not grow: the blocks the client saw open close, and the message ends as a max_tokens stop would. */
  cut(charge: Charge): string {
    // The first read may already be more than the hold covers: the client then gets the message's start.
    let frames = this.undeliveredStart ?? '';
    for (const index of this.deliveredOpenBlocks) frames += sseEvent('content_block_stop', JSON.stringify({ type: 'content_block_stop', index }));
    const delta = { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: usageWithCost(undefined, charge) };
    return frames + sseEvent('message_delta', JSON.stringify(delta)) + MESSAGE_STOP;
  }

  error(error: GatewayError): string {
    return sseEvent('error', verbatimBody(error) ?? JSON.stringify(messagesErrorBody(error, this.requestId)));
  }
}

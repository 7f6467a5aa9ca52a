// One streamed attempt of a translated cell: the upstream's chat chunks, read by the candidate's own chat
// stream translator (usage wherever it comes, reasoning renamed to reasoning_content, tool calls indexed
// densely), written as a Responses stream that Codex and the openai SDK accumulate:
//   response.created, response.in_progress → one output item open at a time, each with its complete
//   response.output_item.done (Codex rebuilds its history from those): a reasoning item (its summary from
//   reasoning_content, reasoning_summary_text deltas), a message (output_text / refusal parts and their
//   deltas), one function_call per tool call (arguments deltas) → after the settlement, exactly one
//   terminal event, response.completed or .incomplete, with the whole response, its usage in the Responses
//   convention and usage.cost.
// Every event is named (`event:` line) and numbered: sequence_number from 0, one more per event. A call
// starts as soon as its name is known; a fragment of a call whose item has closed (a server interleaving
// parallel calls) is dropped. A growing hold's cut is a response.incomplete listing what the client saw
// finished; a failure a response.failed with the usage charged — never zero once output went out.
import type { GatewayError } from '../../../errors.js';
import { isJsonObject, type JsonObject } from '../../../json-object.js';
import type { Charge } from '../../../pipeline/admission/reservation.js';
import type { ClientStream } from '../../../pipeline/client-api.js';
import type { ChatStreamTranslator, FramedEvent, ReportedUsage } from '../../../providers/types.js';
import { COUNT_BUDGET_MS, TokenTally } from '../../../tokens/token-tally.js';
import { responsesUsage } from '../usage.js';
import type { ResponsesBody } from '../validate.js';
import { functionCallItem, messageItem, reasoningItem, textPart } from './answer.js';
import { responsesCallId } from './call-ids.js';
import { endOf, responseObject } from './response.js';
import { asResponsesUsage } from './usage.js';

/** A tool call as its fragments arrive; `sent` once its item closed. */
interface ToolCall {
  readonly chatIndex: number;
  id: unknown;
  name: string;
  args: string;
  sent: boolean;
}

type PartKind = 'output_text' | 'refusal';

type OpenItem =
  | { readonly kind: 'reasoning'; readonly id: string; readonly index: number; text: string }
  | { readonly kind: 'message'; readonly id: string; readonly index: number; readonly parts: { kind: PartKind; text: string }[] }
  | { readonly kind: 'call'; readonly id: string; readonly index: number; readonly call: ToolCall; readonly callId: string };

function frame(payload: JsonObject): string {
  return `event: ${String(payload.type)}\ndata: ${JSON.stringify(payload)}\n\n`;
}

export class ChatResponsesStream implements ClientStream {
  sawOutput = false;
  sawFinish = false;
  private readonly output: TokenTally;
  private readonly responseId: string;
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private sequence = 0;
  private started = false;
  /** Items finished, in output order. */
  private readonly items: JsonObject[] = [];
  private open: OpenItem | undefined;
  private readonly calls = new Map<number, ToolCall>();
  private finish: unknown;
  /** What the client had when a growing hold last covered the stream (a cut ends after it). */
  private delivered_: { readonly sequence: number; readonly items: number } | undefined;

  /** `namespaces`: the namespace of each function the request flattened (a call of one carries it back). */
  constructor(
    private readonly translator: ChatStreamTranslator,
    private readonly body: ResponsesBody,
    requestId: string,
    private readonly namespaces: ReadonlyMap<string, string>,
    tally: TokenTally = new TokenTally(COUNT_BUDGET_MS),
  ) {
    this.output = tally;
    this.responseId = `resp_${requestId}`;
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
    // One choice: a Responses request has no `n`.
    const choice = chunk.choices.find((c) => isJsonObject(c) && (c.index ?? 0) === 0);
    if (!isJsonObject(choice)) return frames;
    const delta = isJsonObject(choice.delta) ? choice.delta : {};
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') frames += this.reasoning(delta.reasoning_content);
    if (typeof delta.content === 'string' && delta.content !== '') frames += this.text('output_text', delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') frames += this.text('refusal', delta.refusal);
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) frames += this.gather(call);
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
    const end = endOf(this.finish);
    const response = this.response(end.status, this.items, {
      incomplete_details: end.incomplete_details,
      completed_at: Math.floor(Date.now() / 1000),
      usage: responsesUsage(charge, asResponsesUsage(this.translator.usage)),
    });
    frames += this.event(`response.${end.status}`, { response });
    return frames;
  }

  markDelivered(): void {
    this.delivered_ = { sequence: this.sequence, items: this.items.length };
  }

  /** A growing hold could not grow: the response ends incomplete after what the client saw, as a max_output_tokens stop would. */
  cut(charge: Charge): string {
    let frames = '';
    let items: JsonObject[] = [];
    if (this.delivered_) {
      this.sequence = this.delivered_.sequence;
      items = this.items.slice(0, this.delivered_.items);
    } else {
      // The client never saw the stream begin.
      this.sequence = 0;
      frames = this.start();
    }
    const response = this.response('incomplete', items, { incomplete_details: { reason: 'max_output_tokens' }, usage: responsesUsage(charge, null) });
    return frames + this.event('response.incomplete', { response });
  }

  error(error: GatewayError, charge?: Charge): string {
    const frames = this.started ? '' : this.start();
    const response = this.response('failed', this.items, {
      // The Response schema's codes: a rate limit is one, anything else the server's error.
      error: { code: error.status === 429 ? 'rate_limit_exceeded' : 'server_error', message: error.message },
      ...(charge ? { usage: responsesUsage(charge, asResponsesUsage(this.translator.usage)) } : {}),
    });
    return frames + this.event('response.failed', { response });
  }

  private response(status: 'in_progress' | 'completed' | 'incomplete' | 'failed', items: readonly JsonObject[], extra: JsonObject = {}): JsonObject {
    return responseObject(this.body, this.responseId, this.createdAt, status, items, extra);
  }

  private event(type: string, fields: JsonObject): string {
    return frame({ type, sequence_number: this.sequence++, ...fields });
  }

  private start(): string {
    this.started = true;
    const response = this.response('in_progress', []);
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private get suffix(): string {
    return this.responseId.slice('resp_'.length);
  }

  private get nextIndex(): number {
    return this.items.length + (this.open ? 1 : 0);
  }

  private reasoning(text: string): string {
    let frames = '';
    if (this.open?.kind !== 'reasoning') {
      frames += this.closeOpen();
      const open = { kind: 'reasoning' as const, id: `rs_${this.suffix}_${this.nextIndex}`, index: this.nextIndex, text: '' };
      this.open = open;
      frames += this.event('response.output_item.added', { output_index: open.index, item: { id: open.id, type: 'reasoning', summary: [] } });
      frames += this.event('response.reasoning_summary_part.added', { item_id: open.id, output_index: open.index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    const open = this.open as Extract<OpenItem, { kind: 'reasoning' }>;
    open.text += text;
    this.meter(text);
    return frames + this.event('response.reasoning_summary_text.delta', { item_id: open.id, output_index: open.index, summary_index: 0, delta: text });
  }

  private text(kind: PartKind, text: string): string {
    let frames = '';
    if (this.open?.kind !== 'message') {
      frames += this.closeOpen();
      const open = { kind: 'message' as const, id: `msg_${this.suffix}_${this.nextIndex}`, index: this.nextIndex, parts: [] };
      this.open = open;
      frames += this.event('response.output_item.added', { output_index: open.index, item: messageItem(open.id, 'in_progress', []) });
    }
    const open = this.open as Extract<OpenItem, { kind: 'message' }>;
    let part = open.parts.at(-1);
    if (part?.kind !== kind) {
      if (part) frames += this.closePart(open, open.parts.length - 1);
      part = { kind, text: '' };
      open.parts.push(part);
      frames += this.event('response.content_part.added', { item_id: open.id, output_index: open.index, content_index: open.parts.length - 1, part: partOf(kind, '') });
    }
    part.text += text;
    this.meter(text);
    const where = { item_id: open.id, output_index: open.index, content_index: open.parts.length - 1 };
    return frames + (kind === 'output_text' ? this.event('response.output_text.delta', { ...where, delta: text, logprobs: [] }) : this.event('response.refusal.delta', { ...where, delta: text }));
  }

  /** One tool-call fragment: its item starts once the call's name is known, its arguments stream while it is open. */
  private gather(fragment: unknown): string {
    if (!isJsonObject(fragment) || typeof fragment.index !== 'number') return '';
    let call = this.calls.get(fragment.index);
    if (!call) this.calls.set(fragment.index, (call = { chatIndex: fragment.index, id: undefined, name: '', args: '', sent: false }));
    if (call.sent) return '';
    if (typeof fragment.id === 'string' && fragment.id !== '' && call.id === undefined) call.id = fragment.id;
    const fn = isJsonObject(fragment.function) ? fragment.function : {};
    if (typeof fn.name === 'string' && call.name === '') call.name = fn.name;
    const args = typeof fn.arguments === 'string' ? fn.arguments : isJsonObject(fn.arguments) ? JSON.stringify(fn.arguments) : '';
    const open = this.open;
    if (open?.kind === 'call' && open.call === call) return args === '' ? '' : this.argumentsDelta(open, args);
    call.args += args;
    if (call.name === '') return '';
    return this.closeOpen() + this.startCall(call);
  }

  private startCall(call: ToolCall): string {
    const index = this.nextIndex;
    const open = { kind: 'call' as const, id: `fc_${this.suffix}_${call.chatIndex}`, index, call, callId: responsesCallId(call.id, `${this.responseId}:${call.chatIndex}`) };
    this.open = open;
    this.meter(call.name);
    const buffered = call.args;
    call.args = '';
    const frames = this.event('response.output_item.added', { output_index: index, item: functionCallItem(open.id, 'in_progress', open.callId, call.name, '', this.namespaces.get(call.name)) });
    return frames + (buffered === '' ? '' : this.argumentsDelta(open, buffered));
  }

  private argumentsDelta(open: Extract<OpenItem, { kind: 'call' }>, args: string): string {
    open.call.args += args;
    this.meter(args);
    return this.event('response.function_call_arguments.delta', { item_id: open.id, output_index: open.index, delta: args });
  }

  private closePart(open: Extract<OpenItem, { kind: 'message' }>, contentIndex: number): string {
    const part = open.parts[contentIndex]!;
    const where = { item_id: open.id, output_index: open.index, content_index: contentIndex };
    const done = part.kind === 'output_text' ? this.event('response.output_text.done', { ...where, text: part.text, logprobs: [] }) : this.event('response.refusal.done', { ...where, refusal: part.text });
    return done + this.event('response.content_part.done', { ...where, part: partOf(part.kind, part.text) });
  }

  /** Ends the open item with its complete form. */
  private closeOpen(): string {
    const open = this.open;
    if (!open) return '';
    let frames = '';
    let item: JsonObject;
    if (open.kind === 'reasoning') {
      const where = { item_id: open.id, output_index: open.index, summary_index: 0 };
      frames += this.event('response.reasoning_summary_text.done', { ...where, text: open.text });
      frames += this.event('response.reasoning_summary_part.done', { ...where, part: { type: 'summary_text', text: open.text } });
      item = reasoningItem(open.id, open.text);
    } else if (open.kind === 'message') {
      frames += this.closePart(open, open.parts.length - 1);
      item = messageItem(open.id, 'completed', open.parts.map((part) => partOf(part.kind, part.text)));
    } else {
      const { call } = open;
      call.sent = true;
      frames += this.event('response.function_call_arguments.done', { item_id: open.id, output_index: open.index, name: call.name, arguments: call.args });
      item = functionCallItem(open.id, 'completed', open.callId, call.name, call.args, this.namespaces.get(call.name));
    }
    this.open = undefined;
    this.items.push(item);
    return frames + this.event('response.output_item.done', { output_index: open.index, item });
  }

  /** Closes the open item, then every call not sent yet, in index order (the upstream has moved past them). */
  private closeAll(): string {
    let frames = this.closeOpen();
    for (const chatIndex of [...this.calls.keys()].sort((a, b) => a - b)) {
      const call = this.calls.get(chatIndex)!;
      if (!call.sent) frames += this.startCall(call) + this.closeOpen();
    }
    return frames;
  }

  private meter(text: string): void {
    if (text.length === 0) return;
    this.output.push(text);
    this.sawOutput = true;
  }
}

function partOf(kind: PartKind, text: string): JsonObject {
  return kind === 'output_text' ? textPart(text) : { type: 'refusal', refusal: text };
}

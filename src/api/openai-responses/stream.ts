// One streamed Responses attempt in a native cell: every upstream event goes to the client as it came (its
// `event:` line if it had one, its `data:` unchanged), metered on the way (output text, function-call
// arguments, reasoning summaries — for an estimate should the usage never come), except the ONE terminal
// event (`response.completed` / `.incomplete` / `.failed`), held back until the request is settled and then
// re-encoded with `usage.cost` inside `response.usage`. The gateway's own ends are Responses events too: a
// growing hold's cut is a `response.incomplete` (max_output_tokens) and a failure a `response.failed`,
// each with the usage charged, numbered after the upstream's last `sequence_number`.
import type { GatewayError } from '../../errors.js';
import { isJsonObject, type JsonObject } from '../../json-object.js';
import type { Charge } from '../../pipeline/admission/reservation.js';
import type { ClientStream, StoredIds } from '../../pipeline/client-api.js';
import { UpstreamFailureError, type FramedEvent, type ReportedUsage, type UpstreamFailure } from '../../providers/types.js';
import { isDeltaEvent, ResponsesOutputMeter } from './output-meter.js';
import { readResponsesUsage, responsesUsage } from './usage.js';
import type { ResponsesBody } from './validate.js';

const TERMINAL_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** The upstream's own failure: an `error` event, or a `response.failed` before any output and without usage. */
export function streamFailure(error: unknown, fallback: string): UpstreamFailure {
  const e = isJsonObject(error) ? error : {};
  const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
  return { status: 0, message: text(e.message) ?? fallback, type: text(e.type), code: text(e.code), param: text(e.param), retryAfter: undefined };
}

export class ResponsesClientStream implements ClientStream {
  finished = false;
  usage: ReportedUsage | null = null;
  sawFinish = false;
  private readonly meter = new ResponsesOutputMeter();
  /** The upstream names its events: the gateway's own are named too. */
  private named = false;
  private lastSequence = -1;
  /** The response as the upstream last described it, for the gateway's own terminal events. */
  private response: JsonObject | undefined;
  /** The terminal event, held back until the charge is known, and the event name it came with. */
  private terminal: { readonly json: JsonObject; readonly name: string | undefined } | undefined;
  /** What the upstream sent after its terminal event (a compatible server's `[DONE]`), kept behind it. */
  private afterTerminal = '';
  /** Finished output items, in order (a cut or failed response lists them, as Codex rebuilds its history from them). */
  private readonly doneItems: JsonObject[] = [];
  private readonly itemIds: string[] = [];
  /** Items whose text was metered from their deltas (their finished form is not counted again). */
  private readonly deltaItems = new Set<string>();

  constructor(
    private readonly body: ResponsesBody,
    private readonly requestId: string,
  ) {}

  get sawOutput(): boolean {
    return this.meter.sawOutput;
  }

  push(event: FramedEvent): string {
    if (event.event !== undefined) this.named = true;
    const frame = frameOf(event.event, event.data);
    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch {
      json = undefined;
    }
    if (this.terminal) {
      this.afterTerminal += frame;
      return '';
    }
    if (!isJsonObject(json)) return frame;
    if (typeof json.sequence_number === 'number' && json.sequence_number > this.lastSequence) this.lastSequence = json.sequence_number;
    const type = typeof json.type === 'string' ? json.type : (event.event ?? '');
    if (type === 'error') throw new UpstreamFailureError(streamFailure(json.error ?? json, 'The upstream reported an error.'));
    if (isJsonObject(json.response)) this.response = json.response;
    if (TERMINAL_EVENTS.has(type)) return this.holdTerminal(json, type, event.event);
    if (isDeltaEvent(type)) {
      this.meter.delta(json.delta);
      if (typeof json.item_id === 'string') this.deltaItems.add(json.item_id);
    } else if (type === 'response.output_item.done' && isJsonObject(json.item)) {
      this.itemDone(json.item);
    }
    return frame;
  }

  delivered(): number {
    return this.meter.tokens();
  }

  stored(): StoredIds | undefined {
    if (this.body.store === false) return undefined;
    const id = this.response?.id;
    return typeof id === 'string' ? { responseId: id, itemIds: this.itemIds } : undefined;
  }

  final(charge: Charge): string {
    const terminal = this.terminal ?? { json: this.gatewayEvent('response.completed', { status: 'completed' }), name: this.named ? 'response.completed' : undefined };
    const response = isJsonObject(terminal.json.response) ? terminal.json.response : {};
    const json = { ...terminal.json, response: { ...response, usage: responsesUsage(charge, this.usage) } };
    return frameOf(terminal.name, JSON.stringify(json)) + this.afterTerminal;
  }

  cut(charge: Charge): string {
    const json = this.gatewayEvent('response.incomplete', {
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      usage: responsesUsage(charge, this.usage),
    });
    return frameOf(this.named ? 'response.incomplete' : undefined, JSON.stringify(json));
  }

  error(error: GatewayError, charge?: Charge): string {
    const json = this.gatewayEvent('response.failed', {
      status: 'failed',
      // The Response schema's codes: a rate limit is one, anything else the server's error.
      error: { code: error.status === 429 ? 'rate_limit_exceeded' : 'server_error', message: error.message },
      usage: charge ? responsesUsage(charge, this.usage) : null,
    });
    return frameOf(this.named ? 'response.failed' : undefined, JSON.stringify(json));
  }

  /** The terminal event: its usage read, held back for the charge. A failure before any output with no usage is the upstream's error. */
  private holdTerminal(json: JsonObject, type: string, name: string | undefined): string {
    const response = isJsonObject(json.response) ? json.response : {};
    const usage = readResponsesUsage(response.usage);
    // Items that came only in the terminal response (no item events) still count as delivered output.
    if (Array.isArray(response.output)) {
      for (const item of response.output) if (isJsonObject(item) && !(typeof item.id === 'string' && this.itemIds.includes(item.id))) this.itemDone(item);
    }
    if (type === 'response.failed' && !usage && !this.sawOutput) throw new UpstreamFailureError(streamFailure(response.error, 'The upstream response failed.'));
    this.usage = usage;
    this.terminal = { json, name };
    this.finished = true;
    this.sawFinish = true;
    return '';
  }

  private itemDone(item: JsonObject): void {
    this.doneItems.push(item);
    const id = typeof item.id === 'string' ? item.id : undefined;
    if (id !== undefined) this.itemIds.push(id);
    if (id !== undefined && this.deltaItems.has(id)) this.meter.sawOutput = true;
    else this.meter.item(item);
  }

  /** A terminal event the gateway writes: the upstream's response so far, with `fields` and the finished items. */
  private gatewayEvent(type: string, fields: JsonObject): JsonObject {
    const base: JsonObject = this.response ?? { id: `resp_${this.requestId}`, object: 'response', created_at: Math.floor(Date.now() / 1000), model: this.body.model };
    return { type, sequence_number: this.lastSequence + 1, response: { ...base, output: this.doneItems, ...fields } };
  }
}

/** An SSE frame: the event's name when it has one, its data line(s) as they came. */
function frameOf(name: string | undefined, data: string): string {
  return `${name === undefined ? '' : `event: ${name}\n`}data: ${data.includes('\n') ? data.split('\n').join('\ndata: ') : data}\n\n`;
}

// One streamed chat completion attempt as the client receives it: the upstream's events through the
// provider's translator into chat.completion.chunks, each metered (the output delivered, should there be
// no usage) and framed as `data:` lines; and the gateway's own last frames — the usage chunk with the
// cost and [DONE], the "length" finish of a stream a growing hold ended, or an error event and [DONE].
import type { GatewayError } from '../../errors.js';
import type { JsonObject } from '../../json-object.js';
import type { Charge } from '../../pipeline/admission/reservation.js';
import type { ClientStream } from '../../pipeline/client-api.js';
import type { ChatStreamTranslator, FramedEvent, ReportedUsage } from '../../providers/types.js';
import { openaiUsage } from '../openai-usage.js';
import { encodeSseData, SSE_DONE } from '../sse.js';
import { OutputMeter } from './output-meter.js';

export class ChatClientStream implements ClientStream {
  private readonly meter = new OutputMeter();

  constructor(
    private readonly translator: ChatStreamTranslator,
    private readonly clientModel: string,
    private readonly requestId: string,
  ) {}

  push(event: FramedEvent): string {
    const chunk = this.translator.onEvent(event);
    if (!chunk) return '';
    this.meter.observeChunk(chunk);
    return encodeSseData(chunk);
  }

  get finished(): boolean {
    return this.translator.finished;
  }

  get usage(): ReportedUsage | null {
    return this.translator.usage;
  }

  get sawOutput(): boolean {
    return this.meter.sawOutput;
  }

  get sawFinish(): boolean {
    return this.meter.sawFinish;
  }

  delivered(): number {
    return this.meter.tokens();
  }

  final(charge: Charge): string {
    const { translator } = this;
    // One literal, not a spread of envelope() (the same frame): the spread's copy kept more of each
    // streamed request alive through scavenges (bench --gc, tollgate-stream: ~250 B/request more promoted).
    const frame = {
      id: translator.id || `chatcmpl-${this.requestId}`,
      object: 'chat.completion.chunk',
      created: translator.created || Math.floor(Date.now() / 1000),
      model: this.clientModel,
      choices: [],
      usage: openaiUsage(charge, translator.usage, true),
    };
    return encodeSseData(frame) + SSE_DONE;
  }

  cut(charge: Charge, choices: number): string {
    const base = this.envelope();
    const finish = { ...base, choices: Array.from({ length: choices }, (_, index) => ({ index, delta: {}, finish_reason: 'length' })) };
    return encodeSseData(finish) + encodeSseData({ ...base, choices: [], usage: openaiUsage(charge, this.translator.usage, true) }) + SSE_DONE;
  }

  error(error: GatewayError): string {
    return encodeSseData(error.toBody()) + SSE_DONE;
  }

  /** The fields every gateway-made chunk shares with the upstream's (its id and created, when it sent them). */
  private envelope(): JsonObject {
    return {
      id: this.translator.id || `chatcmpl-${this.requestId}`,
      object: 'chat.completion.chunk',
      created: this.translator.created || Math.floor(Date.now() / 1000),
      model: this.clientModel,
    };
  }
}
